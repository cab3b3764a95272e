"""Object storage for logos and proof photos: never public, reached only through short-lived
signed links.

The embedded default keeps objects under <data_dir>/objects and signs its own links with
itsdangerous (HMAC-SHA256 under a subkey of appliance.key, timestamped, valid for the link
lifetime): a PUT link signs the operation, the key and the content type; a GET link the operation
and the key. The dispatch app serves both at /objects/<key>. Nothing lists
the store.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import secrets
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO, Protocol
from urllib.parse import quote, urlencode

from itsdangerous import BadSignature, TimestampSigner, URLSafeTimedSerializer

from appliance.common import clock
from appliance.common.health import Check
from appliance.common.keys import subkey

KEY_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*(/[A-Za-z0-9][A-Za-z0-9_.-]*)*$")
IMAGE_TYPES = {"image/jpeg": "jpg", "image/png": "png", "image/webp": "webp"}


class StorageUnavailable(Exception):
    """The store cannot be reached or written (answered as 503)."""


class ObjectTooLarge(Exception):
    pass


@dataclasses.dataclass(frozen=True)
class PresignedUpload:
    key: str
    url: str
    expires_in: int


@dataclasses.dataclass(frozen=True)
class StoredObject:
    path: Path
    content_type: str
    size: int


class ObjectStore(Protocol):
    """What the dispatch service asks of a store: the embedded LocalObjectStore or S3ObjectStore."""

    lifetime_seconds: int
    max_bytes: int

    def presign_put(
        self, key: str, content_type: str, content_length: int | None = None
    ) -> PresignedUpload: ...

    def presign_get(self, key: str) -> str: ...

    def exists(self, key: str) -> bool: ...

    def probe(self) -> Check: ...


def valid_key(key: str) -> bool:
    return 1 <= len(key) <= 500 and bool(KEY_PATTERN.match(key)) and ".." not in key


def new_key(prefix: str, content_type: str) -> str:
    """A fresh unguessable key under ``prefix`` with the extension of ``content_type``."""
    return f"{prefix.strip('/')}/{secrets.token_hex(16)}.{IMAGE_TYPES.get(content_type, 'bin')}"


class _ClockSigner(TimestampSigner):
    """Timestamps (and ages) links by the appliance's clock, which tests can move."""

    def get_timestamp(self) -> int:
        return clock.unix()


class LocalObjectStore:
    def __init__(
        self, root: Path, master_key: bytes, base_url: str, *, lifetime_seconds: int, max_bytes: int
    ):
        self.root = Path(root)
        self._links = URLSafeTimedSerializer(
            subkey(master_key, "object-links"), salt="object-links", signer=_ClockSigner
        )
        self.base_url = base_url.rstrip("/")
        self.lifetime_seconds = lifetime_seconds
        self.max_bytes = max_bytes

    # -- links ---------------------------------------------------------------------------------

    def _link(self, op: str, key: str, content_type: str = "") -> str:
        token = self._links.dumps([op, key, content_type])
        return f"{self.base_url}/objects/{quote(key)}?{urlencode({'link': token})}"

    def presign_put(self, key: str, content_type: str, content_length: int | None = None) -> PresignedUpload:
        """``content_length`` is bound by S3 links only: this store caps every upload at
        ``max_bytes`` as it arrives (dispatch/objects/routes.py)."""
        self._require_writable()
        return PresignedUpload(
            key=key, url=self._link("put", key, content_type), expires_in=self.lifetime_seconds
        )

    def presign_get(self, key: str) -> str:
        return self._link("get", key)

    def verify(self, op: str, key: str, token: str) -> str | None:
        """The content type signed into ``token`` when it is an unexpired link for ``op`` on
        ``key`` ("" for a GET link), else None."""
        if not valid_key(key):
            return None
        try:
            signed = self._links.loads(token, max_age=self.lifetime_seconds)
        except BadSignature:  # tampered, malformed or expired
            return None
        if not (isinstance(signed, list) and len(signed) == 3 and signed[:2] == [op, key]):
            return None
        return str(signed[2])

    # -- objects -------------------------------------------------------------------------------

    def _path(self, key: str) -> Path:
        if not valid_key(key):
            raise ValueError("invalid object key")
        return self.root / key

    def _require_writable(self) -> None:
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageUnavailable(str(exc)) from exc
        if not os.access(self.root, os.W_OK):
            raise StorageUnavailable(f"{self.root} is not writable")

    def put(self, key: str, stream: BinaryIO | Iterable[bytes], content_type: str) -> StoredObject:
        """Store the bytes of ``stream`` (at most max_bytes) under ``key``; replaces atomically."""
        path = self._path(key)
        self._require_writable()
        path.parent.mkdir(parents=True, exist_ok=True)
        size = 0
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".upload-")
        try:
            with os.fdopen(fd, "wb") as out:
                chunks = iter(lambda: stream.read(65536), b"") if hasattr(stream, "read") else stream
                for chunk in chunks:
                    size += len(chunk)
                    if size > self.max_bytes:
                        raise ObjectTooLarge
                    out.write(chunk)
            Path(temp + ".meta").write_text(json.dumps({"contentType": content_type, "size": size}))
            os.replace(temp + ".meta", str(path) + ".meta")
            os.replace(temp, path)
        except BaseException:
            for leftover in (temp, temp + ".meta"):
                if os.path.exists(leftover):
                    os.unlink(leftover)
            raise
        return StoredObject(path, content_type, size)

    def get(self, key: str) -> StoredObject | None:
        path = self._path(key)
        meta_path = Path(str(path) + ".meta")
        if not path.is_file() or not meta_path.is_file():
            return None
        meta = json.loads(meta_path.read_text())
        return StoredObject(path, meta["contentType"], meta["size"])

    def exists(self, key: str) -> bool:
        return valid_key(key) and self.get(key) is not None

    def probe(self) -> Check:
        self._require_writable()
        with tempfile.NamedTemporaryFile(dir=self.root, prefix=".probe-"):
            pass
        return Check("pass", data={"backend": "local"})
