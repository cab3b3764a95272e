"""The files of static/ as the pages get them: every reference from one of them to another (a
`src=`, an `href=`, a module's `import … from "…"`) carries the content hash of what it names
(`/static/js/api.js?v=3f2a…`), so that a hashed URL can be cached for a year and a release still
shows at once; the hash of a file that names others covers theirs (a Merkle tree), so a changed
module changes every page that reaches it.

The table is built once per process from the files (the bundle is read-only; in a checkout it is
built again when a file changes), never at package time: there is no build step.
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
import re
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from appliance.common.assets import static_dir

# URL prefixes of static/ and the folder each serves.
_PREFIXES = (("/static/", ""), ("/console/", "console/"), ("/app/", "app/"))
# A quoted absolute URL of a file under one of the prefixes ("…", '…' or a CSS url(…)).
_REFERENCE = re.compile(
    rb"""(?P<open>["'(])(?P<url>/(?:static|console|app)/[A-Za-z0-9_./-]+\.[a-z]+)(?P<close>["')])"""
)
# Files whose text names other files, rewritten with the hashes.
_REWRITTEN = {".html", ".js", ".css", ".webmanifest"}
# The service worker stays at its own URL with its own plain list of paths (its cache keys are
# paths): it is neither rewritten nor named with a hash.
_UNHASHED = {"app/sw.js"}
HASH_LENGTH = 16


@dataclass(frozen=True)
class Asset:
    relative: str  # under static/, with forward slashes
    body: bytes  # as served: references rewritten
    digest: str  # the SHA-256 of body, hex

    @property
    def version(self) -> str:
        return self.digest[:HASH_LENGTH]

    @property
    def mimetype(self) -> str:
        if self.relative.endswith(".webmanifest"):
            return "application/manifest+json"
        if self.relative.endswith((".js", ".mjs")):
            return "text/javascript"
        guessed = mimetypes.guess_type(self.relative)[0] or "application/octet-stream"
        return guessed


def relative_of_url(url_path: str) -> str | None:
    """The file under static/ that a URL path names (`/console/board.js` → `console/board.js`)."""
    for prefix, folder in _PREFIXES:
        if url_path.startswith(prefix):
            return folder + url_path[len(prefix) :]
    return None


class AssetTable:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._assets: dict[str, Asset] = {}
        self._building: set[str] = set()
        self._lock = threading.RLock()  # a file names others: built depth first, one thread at a time

    def get(self, relative: str) -> Asset | None:
        with self._lock:
            return self._get(relative)

    def _get(self, relative: str) -> Asset | None:
        if relative in self._assets:
            return self._assets[relative]
        path = self._path(relative)
        if path is None:
            return None
        if relative in self._building:  # a cycle: named without its hash from inside it
            return None
        self._building.add(relative)
        try:
            raw = path.read_bytes()
            body = self.rewrite(raw) if path.suffix in _REWRITTEN and relative not in _UNHASHED else raw
        finally:
            self._building.discard(relative)
        asset = Asset(relative, body, hashlib.sha256(body).hexdigest())
        self._assets[relative] = asset
        return asset

    def _path(self, relative: str) -> Path | None:
        if not relative or relative.startswith("/") or "\\" in relative:
            return None
        parts = relative.split("/")
        if any(part in {"", ".", ".."} or part.startswith(".") for part in parts):
            return None
        path = self.root.joinpath(*parts)
        return path if path.is_file() else None

    def hashed_url(self, url: str) -> str:
        relative = relative_of_url(url)
        if relative is None or relative in _UNHASHED:
            return url
        asset = self.get(relative)
        return f"{url}?v={asset.version}" if asset is not None else url

    def rewrite(self, text: bytes) -> bytes:
        def replace(match: re.Match[bytes]) -> bytes:
            url = match.group("url").decode()
            return match.group("open") + self.hashed_url(url).encode() + match.group("close")

        return _REFERENCE.sub(replace, text)


def _fingerprint(root: Path) -> tuple[tuple[str, int, int], ...]:
    found = []
    for folder, _dirs, files in os.walk(root):
        for name in files:
            stat = os.stat(os.path.join(folder, name))
            found.append((os.path.join(folder, name), stat.st_mtime_ns, stat.st_size))
    return tuple(sorted(found))


class _Tables:
    """One table per process; in a checkout, looked over at most once a second and built again
    when a file changed (an edited page shows on reload). A frozen bundle never changes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._table: AssetTable | None = None
        self._fingerprint: tuple[tuple[str, int, int], ...] = ()
        self._checked = 0.0

    def current(self) -> AssetTable:
        root = static_dir()
        with self._lock:
            now = time.monotonic()
            frozen = getattr(sys, "_MEIPASS", None) is not None
            if self._table is not None and self._table.root == root and (frozen or now - self._checked < 1.0):
                return self._table
            self._checked = now
            fingerprint = _fingerprint(root)
            if self._table is None or self._table.root != root or fingerprint != self._fingerprint:
                self._table = AssetTable(root)
                self._fingerprint = fingerprint
            return self._table


_tables = _Tables()


def table() -> AssetTable:
    return _tables.current()
