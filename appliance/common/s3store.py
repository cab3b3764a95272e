"""Objects (proof photos, logos) in an S3-compatible bucket (AWS S3, MinIO, Ceph, R2, …) through
the MinIO client, when the ``s3_*`` settings name one. Clients upload and download with presigned
URLs straight to the bucket; the appliance only signs, checks existence and size, and probes.

A presigned PUT binds what it signs (issue 33): the link is signed for the content type it was
issued for and, when the client said how large its upload is, for that Content-Length, so the
bucket itself refuses another type or size (SignatureDoesNotMatch). A PUT cannot sign a range of
sizes, so a link issued without a size binds the type only; as a second line, an object larger
than ``max_bytes``, or of another content type than its key was issued for, counts as absent: an
order can never claim it as its proof photo, nor a company as its logo. Anything the bucket
cannot answer (down, wrong credentials, missing bucket) is StorageUnavailable: 503 to the client,
"fail" on the probe.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from urllib.parse import SplitResult, urlsplit, urlunsplit

from minio import Minio, signer
from minio.error import S3Error
from minio.helpers import queryencode, sha256_hash
from minio.time import to_amz_date, utcnow
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
        self.region = region
        self.lifetime = timedelta(seconds=lifetime_seconds)
        self.lifetime_seconds = lifetime_seconds
        self.max_bytes = max_bytes

    def presign_put(self, key: str, content_type: str, content_length: int | None = None) -> PresignedUpload:
        try:
            url = self._presign_put(key, content_type, content_length, utcnow())
        except (S3Error, HTTPError, OSError, ValueError) as exc:
            raise StorageUnavailable(f"object storage: {exc}") from exc
        return PresignedUpload(key=key, url=url, expires_in=self.lifetime_seconds)

    def _presign_put(self, key: str, content_type: str, content_length: int | None, date: datetime) -> str:
        """A SigV4 presigned PUT whose signature covers Content-Type (and Content-Length when
        given) beside Host. The MinIO client signs Host only (presign_v4), so the canonical
        request is written here, with the client's own URL building, credentials and signing
        steps (minio.signer), for whatever the bucket's addressing style and region."""
        headers = {"content-type": content_type.strip()}
        if content_length is not None:
            headers["content-length"] = str(content_length)
        url = self.client._base_url.build(  # type: ignore[attr-defined]
            method="PUT", region=self.region, bucket_name=self.bucket, object_name=key, query_params={}
        )
        credentials = self.client._provider.retrieve()  # type: ignore[attr-defined,union-attr]
        headers["host"] = url.netloc
        names = sorted(headers)
        signed_headers = ";".join(names)
        scope = signer._get_scope(date, self.region, "s3")
        query = (
            (url.query + "&" if url.query else "")
            + "X-Amz-Algorithm=AWS4-HMAC-SHA256"
            + f"&X-Amz-Credential={queryencode(credentials.access_key + '/' + scope)}"
            + f"&X-Amz-Date={to_amz_date(date)}"
            + f"&X-Amz-Expires={self.lifetime_seconds}"
            + f"&X-Amz-SignedHeaders={queryencode(signed_headers)}"
        )
        if credentials.session_token:
            query += f"&X-Amz-Security-Token={queryencode(credentials.session_token)}"
        canonical_request = "\n".join(
            [
                "PUT",
                url.path or "/",
                signer._get_canonical_query_string(query),
                "".join(f"{name}:{headers[name]}\n" for name in names),
                signed_headers,
                "UNSIGNED-PAYLOAD",
            ]
        )
        string_to_sign = signer._get_string_to_sign(date, scope, sha256_hash(canonical_request))
        signing_key = signer._get_signing_key(credentials.secret_key, date, self.region, "s3")
        signature = signer._get_signature(signing_key, string_to_sign)
        signed = SplitResult(url.scheme, url.netloc, url.path, f"{query}&X-Amz-Signature={signature}", "")
        return urlunsplit(signed)

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
