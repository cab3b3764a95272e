"""The Content-Security-Policy of every page the dispatch service serves.

Scripts and styles come only from this origin; the few pages that still carry an inline <script> or
<style> block get that exact block allowed by its SHA-256 hash (computed here from the file, so an
edited page never needs a hand-updated header), never by 'unsafe-inline'. MapLibre needs blob:
workers and data:/blob: images; company logos may be any https: image. The browser may talk only to
this origin and to the origins the settings name for objects (S3) and map tiles.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import re
from pathlib import Path
from urllib.parse import urlsplit

from appliance.settings import Settings

_INLINE_SCRIPT = re.compile(rb"<script(?![^>]*\bsrc\s*=)[^>]*>(.*?)</script>", re.DOTALL | re.IGNORECASE)
_INLINE_STYLE = re.compile(rb"<style[^>]*>(.*?)</style>", re.DOTALL | re.IGNORECASE)


def _hash(block: bytes) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(block).digest()).decode() + "'"


@functools.lru_cache(maxsize=64)
def _inline_hashes(path: str, mtime_ns: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return inline_hashes_of(Path(path).read_bytes())


@functools.lru_cache(maxsize=64)
def inline_hashes_of(text: bytes) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The CSP hash sources of the inline scripts and styles of a page as served."""
    scripts = tuple(_hash(block) for block in _INLINE_SCRIPT.findall(text) if block.strip())
    styles = tuple(_hash(block) for block in _INLINE_STYLE.findall(text) if block.strip())
    return scripts, styles


def inline_hashes(page: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The CSP hash sources of a page's inline scripts and styles (cached until the file changes)."""
    return _inline_hashes(str(page), page.stat().st_mtime_ns)


def _origin(url: str) -> str | None:
    parts = urlsplit(url)
    if parts.scheme in {"http", "https"} and parts.netloc:
        return f"{parts.scheme}://{parts.netloc}"
    return None


def connect_origins(settings: Settings) -> list[str]:
    """Origins besides 'self' that pages fetch from: presigned uploads, external tiles, public URL."""
    origins: list[str] = []
    for url in (settings.s3_endpoint, settings.tiles_url, settings.public_url):
        origin = _origin(url)
        if origin and origin not in origins:
            origins.append(origin)
    return origins


def policy(settings: Settings, page: Path | None = None) -> str:
    return policy_for(settings, page.read_bytes() if page is not None else None)


def policy_for(settings: Settings, page: bytes | None = None) -> str:
    """The policy of a page with these bytes (its inline blocks allowed by hash), or of a non-page."""
    scripts, styles = inline_hashes_of(page) if page is not None else ((), ())
    connect = " ".join(["'self'", *connect_origins(settings)])
    directives = [
        "default-src 'none'",
        " ".join(["script-src 'self'", *scripts]),
        " ".join(["style-src 'self'", *styles]),
        " ".join(["img-src 'self' data: blob: https:", *connect_origins(settings)]),
        "font-src 'self'",
        f"connect-src {connect}",
        "worker-src 'self' blob:",
        "child-src 'self' blob:",
        "manifest-src 'self'",
        "media-src 'self' blob:",
        "base-uri 'none'",
        "form-action 'self'",
        "object-src 'none'",
        "frame-ancestors 'none'",
    ]
    return "; ".join(directives)
