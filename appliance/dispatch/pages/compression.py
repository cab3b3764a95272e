"""Brotli and gzip for what the pages fetch, chosen by Accept-Encoding.

A static file is compressed once, the first time a browser asks for it in that encoding, at the
highest level (brotli 11: MapLibre's 930 KiB become 200 KiB), and kept under its content hash in the
data directory's cache/static/ (shared by the serving processes, kept across restarts, never backed
up). A release brings new hashes; the entries of older ones stay (about 500 KiB a release) and the
folder may be deleted at any time. A page rendered per request (the tracking page) is compressed
on the fly at a fast level.
"""

from __future__ import annotations

import gzip
import os
import threading
from pathlib import Path

import brotli

# What compresses; images other than SVG already are.
_COMPRESSIBLE = ("text/", "application/javascript", "application/json", "application/manifest+json")
_SVG = "image/svg+xml"
EXTENSIONS = {"br": "br", "gzip": "gz"}
_SMALLEST = 256  # below a packet's worth, the header costs more than it saves


def compressible(mimetype: str, size: int) -> bool:
    return size >= _SMALLEST and (mimetype.startswith(_COMPRESSIBLE) or mimetype == _SVG)


def chosen_encoding(accept_encoding: str | None) -> str | None:
    """br, else gzip, else None (identity), as the request's Accept-Encoding allows (q=0 refuses)."""
    accepted: dict[str, float] = {}
    for part in (accept_encoding or "").split(","):
        name, _, params = part.strip().partition(";")
        quality = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if name.strip():
            accepted[name.strip().lower()] = quality
    for encoding in ("br", "gzip"):
        quality = accepted.get(encoding, accepted.get("*", 0.0))
        if quality > 0:
            return encoding
    return None


def compress(body: bytes, encoding: str, fast: bool = False) -> bytes:
    if encoding == "br":
        # Quality 11 takes 1.4 s on MapLibre (once per release); 9 is 20x faster and 9 % larger.
        quality = 5 if fast else (11 if len(body) < 512 * 1024 else 9)
        return bytes(brotli.compress(body, quality=quality))
    return gzip.compress(body, compresslevel=6 if fast else 9, mtime=0)


class CompressedCache:
    """Compressed copies of static files by content digest: in memory, then on disk, else made."""

    def __init__(self) -> None:
        self._memory: dict[tuple[str, str], bytes] = {}
        self._lock = threading.Lock()

    def get(self, folder: Path, digest: str, body: bytes, encoding: str) -> bytes:
        key = (digest, encoding)
        found = self._memory.get(key)
        if found is not None:
            return found
        path = folder / f"{digest}.{EXTENSIONS[encoding]}"
        try:
            found = path.read_bytes()
        except OSError:
            found = None
        if found is None:
            found = compress(body, encoding)
            _write_quietly(path, found)
        with self._lock:
            self._memory[key] = found
        return found


def _write_quietly(path: Path, data: bytes) -> None:
    # Written beside and renamed: another process reads a whole file or none. A data directory that
    # cannot be written still serves (from memory).
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(data)
        os.replace(temporary, path)
    except OSError:
        temporary.unlink(missing_ok=True)


cache = CompressedCache()
