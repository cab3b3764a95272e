"""Pack PyInstaller's one-folder bundle into the single executable (make binary runs it).

    python packaging/pack.py dist/appliance-onedir dist/appliance

Compiles packaging/launcher.c (libzstd linked in, so the executable needs only the C library),
appends the bundle as zstd (the `zstd` command, level 18 with a 128 MB long-distance window) in the
launcher's record format, and the trailer that names the
build by the stream's hash. The format and the start-up it buys are described in launcher.c and
docs/packaging.md.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MAGIC = b"APPLPK02"
# zstd --long=27: a 128 MB window, the largest launcher.c accepts (WINDOW_LOG_MAX).
# Level 18 of the stripped bundle (279 MB): 72.2 MB in 134 s of CPU; 17: 74.6 MB, 101 s; 19: 71.2 MB,
# 199 s; 16: 76.7 MB, 80 s; 12: 80.1 MB. 18 keeps room under issue 30's 80 MB at two-thirds of 19's cost.
LEVEL, WINDOW_LOG = 18, 27
BUILD_LEN = 40
HERE = Path(__file__).resolve().parent


def compile_launcher(out: Path) -> bytes:
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        sys.exit("pack: a C compiler (cc) is needed to build the launcher")
    command = [compiler, "-O2", "-s", "-Wall", "-Wextra", "-Wno-format-truncation", "-o", str(out)]
    command += [str(HERE / "launcher.c"), "-Wl,-Bstatic", "-lzstd", "-Wl,-Bdynamic"]
    subprocess.run(command, check=True)
    return out.read_bytes()


def _path(name: str) -> bytes:
    encoded = name.encode()
    return struct.pack("<I", len(encoded)) + encoded


def records(root: Path):
    """Folders first (parents before children), then files grouped by kind (they compress better
    next to their like), then links; paths relative to root, '/'-separated."""
    folders, files, links = [], [], []
    for folder, names, filenames in os.walk(root):
        for name in names + filenames:
            full = Path(folder, name)
            rel = full.relative_to(root).as_posix()
            if full.is_symlink():
                links.append(rel)
            elif full.is_dir():
                folders.append(rel)
            else:
                files.append(rel)
    for rel in sorted(folders):
        yield b"D" + struct.pack("<I", (root / rel).stat().st_mode & 0o7777) + _path(rel)
    for rel in sorted(files, key=lambda r: (Path(r).suffix, Path(r).name, r)):
        stat = (root / rel).stat()
        yield b"F" + struct.pack("<I", stat.st_mode & 0o7777) + _path(rel) + struct.pack("<Q", stat.st_size)
        with open(root / rel, "rb") as source:
            while chunk := source.read(1 << 20):
                yield chunk
    for rel in sorted(links):
        target = os.readlink(root / rel)
        if os.path.isabs(target):
            sys.exit(f"pack: {rel} links outside the bundle ({target})")
        yield b"L" + struct.pack("<I", 0) + _path(rel) + _path(target)
    yield b"E"


def compress(raw: bytes) -> bytes:
    """zstd at level 18 with a long-distance window, so that libraries repeated across the bundle
    compress against each other; it unpacks about seven times faster than xz did (0.4 s of CPU for
    the whole bundle here, xz took 4.8 s) for a payload about 10 % larger, which the debug symbols
    stripped from the bundle more than pay for (docs/packaging.md)."""
    zstd = shutil.which("zstd")
    if zstd is None:
        sys.exit("pack: the zstd command is needed to pack the bundle (Debian: zstd)")
    command = [zstd, "-q", f"-{LEVEL}", f"--long={WINDOW_LOG}", f"-T{os.cpu_count() or 1}", "-c"]
    return subprocess.run(command, input=raw, stdout=subprocess.PIPE, check=True).stdout


def pack(onedir: Path, out: Path) -> None:
    if not (onedir / "appliance").is_file():
        sys.exit(f"pack: {onedir}/appliance is missing (run pyinstaller first)")
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as workdir:
        launcher = compile_launcher(Path(workdir, "launcher"))
    stream = io.BytesIO()
    for chunk in records(onedir):
        stream.write(chunk)
    raw = stream.getvalue()
    data = compress(raw)
    build = hashlib.sha256(launcher + data).hexdigest()[:BUILD_LEN].encode()
    trailer = MAGIC + struct.pack("<QQ", len(launcher), len(data)) + build.ljust(BUILD_LEN, b"\0")
    with tempfile.NamedTemporaryFile(dir=out.parent, prefix=f".{out.name}.", delete=False) as tmp:
        tmp.write(launcher + data + trailer)
    os.chmod(tmp.name, 0o755)
    os.replace(tmp.name, out)
    print(
        f"pack: {out} {out.stat().st_size / 1e6:.1f} MB (bundle {len(raw) / 1e6:.1f} MB unpacked, "
        f"launcher {len(launcher) / 1e3:.0f} kB), build {build.decode()}, {time.monotonic() - started:.0f} s"
    )


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    pack(Path(sys.argv[1]), Path(sys.argv[2]))
