"""The data directory is readable by its owner only (issue 33): it holds the databases (sessions,
customers' addresses), the keys, the outbox (mail with sign-in links) and objects, and any other
local user could otherwise read them.

Every process of the appliance sets the umask 077 when it starts (the ``appliance`` command, and
``serve`` again for an embedding caller), so every file and folder it creates is 0600/0700;
``serve`` also tightens what an older version or another tool left readable, and says so in its
log.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

log = logging.getLogger("appliance.files")

PRIVATE_UMASK = 0o077


def private_umask() -> None:
    """Files and folders created from now on by this process: owner only."""
    os.umask(PRIVATE_UMASK)


def _tighten_one(path: str, changed: list[str], failed: list[str]) -> None:
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:  # removed meanwhile (a SQLite -journal)
        return
    if stat.S_ISLNK(mode) or not mode & 0o077:
        return  # a symbolic link (its target is not ours to change), or private already
    try:
        os.chmod(path, stat.S_IMODE(mode) & 0o700)
    except OSError:
        failed.append(path)
    else:
        changed.append(path)


def tighten(root: Path) -> list[str]:
    """Take group and other permissions off ``root`` and everything under it (symbolic links are
    neither changed nor followed); returns the paths changed, and logs them."""
    root = Path(root)
    if not root.is_dir():
        return []
    changed: list[str] = []
    failed: list[str] = []
    _tighten_one(str(root), changed, failed)
    for folder, folders, files in os.walk(root):
        for name in folders + files:
            _tighten_one(os.path.join(folder, name), changed, failed)
    if changed:
        shown = ", ".join(os.path.relpath(p, root) for p in changed[:5])
        more = f" and {len(changed) - 5} more" if len(changed) > 5 else ""
        log.warning(
            "data directory %s: %d paths were readable by other users, now owner-only: %s%s",
            root,
            len(changed),
            shown,
            more,
        )
    if failed:
        log.warning(
            "data directory %s: %d paths readable by other users could not be changed (another owner?): %s",
            root,
            len(failed),
            ", ".join(os.path.relpath(p, root) for p in failed[:5]),
        )
    return changed
