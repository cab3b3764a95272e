"""Objects (proof photos, logos) in an S3-compatible bucket (AWS S3, MinIO, Ceph, R2, …) through
the MinIO client, when the ``s3_*`` settings name one. Clients upload and download with presigned
URLs straight to the bucket; the appliance only signs, checks existence and size, and probes.

A presigned PUT cannot cap the size, so an object larger than ``max_bytes``, or of another content
type than its key was issued for, counts as absent: an order can never claim it as its proof
photo, nor a company as its logo. Anything the bucket cannot answer (down, wrong
credentials, missing bucket) is StorageUnavailable: 503 to the client, "fail" on the probe.
"""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import urlsplit

from minio import Minio
from minio.error import S3Error
from urllib3.exceptions import HTTPError

from appliance.common.health import Check
from appliance.common.objects import IMAGE_TYPES, PresignedUpload, StorageUnavailable, valid_key

MISSING = {"NoSuchKey", "NoSuchObject", "NotFound"}


def _type_matches(key: str, content_type: str | None) -> bool:
    """A presigned PUT does not bind the content type at the bucket (a client may upload another
    type with the link): an object whose stored type is not the one its key was issued for (the
    key's extension, common/objects.py new_key) counts as absent, as a too large one does."""
    extension = key.rsplit(".", 1)[-1]
    issued = {ext: kind for kind, ext in IMAGE_TYPES.items()}.get(extension)
    return issued is None or (content_type or "").split(";")[0].strip().lower() == issued


class S3ObjectStore:
    def __init__(
        self,
        endpoint: str,
        bucket: str,
        access_key: str,
        secret_key: str,
        region: str,
        *,
        lifetime_seconds: int,
        max_bytes: int,
    ) -> None:
        url = urlsplit(endpoint if "://" in endpoint else f"https://{endpoint}")
        self.client = Minio(
            url.netloc,
            access_key=access_key,
            secret_key=secret_key,
            region=region,
            secure=url.scheme == "https",
        )
        # Short timeouts and no retry storm: a down bucket must answer 503 quickly.
        self.client._http.connection_pool_kw["timeout"] = 5  # type: ignore[attr-defined]
        self.client._http.connection_pool_kw["retries"] = 1  # type: ignore[attr-defined]
        self.bucket = bucket
        self.lifetime = timedelta(seconds=lifetime_seconds)
        self.lifetime_seconds = lifetime_seconds
        self.max_bytes = max_bytes

    def presign_put(self, key: str, content_type: str) -> PresignedUpload:
        try:
            url = self.client.presigned_put_object(self.bucket, key, expires=self.lifetime)
        except (S3Error, HTTPError, OSError, ValueError) as exc:
            raise StorageUnavailable(f"object storage: {exc}") from exc
        return PresignedUpload(key=key, url=url, expires_in=self.lifetime_seconds)

    def presign_get(self, key: str) -> str:
        try:
            return self.client.presigned_get_object(self.bucket, key, expires=self.lifetime)
        except (S3Error, HTTPError, OSError, ValueError) as exc:
            raise StorageUnavailable(f"object storage: {exc}") from exc

    def exists(self, key: str) -> bool:
        if not valid_key(key):
            return False
        try:
            stat = self.client.stat_object(self.bucket, key)
        except S3Error as exc:
            if exc.code in MISSING:
                return False
            raise StorageUnavailable(f"object storage: {exc.code}") from exc
        except (HTTPError, OSError, ValueError) as exc:
            raise StorageUnavailable(f"object storage: {exc}") from exc
        return stat.size is not None and stat.size <= self.max_bytes and _type_matches(key, stat.content_type)

    def probe(self) -> Check:
        try:
            if not self.client.bucket_exists(self.bucket):
                raise StorageUnavailable(f"bucket {self.bucket} does not exist")
        except (S3Error, HTTPError, OSError, ValueError) as exc:
            raise StorageUnavailable(f"object storage: {exc}") from exc
        return Check("pass", data={"backend": "s3", "bucket": self.bucket})
