"""Where scheduled backups are kept: a local folder (each backup a directory, as `appliance backup`
writes it) and an S3-compatible bucket (each file of the backup one object under
``<prefix><name>/``). The files are sealed already (appliance/common/sealing.py): the bucket holds
nothing in the clear but the manifest (names, sizes, checksums, the key's header; no secret).

A backup's manifest is uploaded last and removed first: a name whose manifest is missing is a
backup cut short (or being pruned), which a drill reports as such and retention removes."""

from __future__ import annotations

import re
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit

from minio import Minio
from minio.deleteobjects import DeleteObject
from minio.error import S3Error
from urllib3.exceptions import HTTPError

from appliance.backup import MANIFEST
from appliance.settings import Settings

# appliance-20261128T084112Z: the moment (UTC) the backup was started, to the second.
NAME = re.compile(r"^appliance-(\d{8}T\d{6}Z)$")


class StorageError(Exception):
    """A destination that cannot be written or read now; the message is one line."""


def backup_name(moment: datetime) -> str:
    return "appliance-" + moment.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def taken_at(name: str) -> datetime | None:
    found = NAME.match(name)
    if found is None:
        return None
    return datetime.strptime(found.group(1), "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)


class Destination(Protocol):
    label: str  # where, for people: a folder's path or s3://bucket/prefix

    def names(self) -> list[str]:
        """The backups kept here (names matching NAME), oldest first."""

    def put(self, name: str, backup: Path) -> None:
        """Keep the backup directory ``backup`` here as ``name`` (a local folder may hold it already)."""

    def fetch(self, name: str, into: Path) -> Path:
        """A directory holding the backup ``name`` as stored (downloaded into ``into`` if need be)."""

    def delete(self, name: str) -> None: ...


class LocalFolder:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.label = str(folder)

    def names(self) -> list[str]:
        if not self.folder.is_dir():
            return []
        return sorted(p.name for p in self.folder.iterdir() if p.is_dir() and NAME.match(p.name))

    def path(self, name: str) -> Path:
        return self.folder / name

    def put(self, name: str, backup: Path) -> None:
        if backup.resolve() != self.path(name).resolve():
            shutil.copytree(backup, self.path(name))

    def fetch(self, name: str, into: Path) -> Path:
        return self.path(name)

    def delete(self, name: str) -> None:
        (self.path(name) / MANIFEST).unlink(missing_ok=True)
        shutil.rmtree(self.path(name), ignore_errors=True)


class Bucket:
    """A prefix of an S3-compatible bucket, through the MinIO client (as the objects' store)."""

    def __init__(
        self, endpoint: str, bucket: str, prefix: str, access_key: str, secret_key: str, region: str
    ) -> None:
        url = urlsplit(endpoint if "://" in endpoint else f"https://{endpoint}")
        self.client = Minio(
            url.netloc,
            access_key=access_key,
            secret_key=secret_key,
            region=region or "us-east-1",
            secure=url.scheme == "https",
        )
        self.bucket = bucket
        self.prefix = prefix.lstrip("/")
        if self.prefix and not self.prefix.endswith("/"):
            self.prefix += "/"
        self.label = f"s3://{bucket}/{self.prefix}"

    def _key(self, name: str, relative: str = "") -> str:
        return f"{self.prefix}{name}/{relative}"

    def _failed(self, exc: Exception) -> StorageError:
        code = exc.code if isinstance(exc, S3Error) else str(exc)
        return StorageError(f"{self.label}: {code}")

    def names(self) -> list[str]:
        try:
            found = [
                (item.object_name or "")[len(self.prefix) :].rstrip("/")
                for item in self.client.list_objects(self.bucket, prefix=self.prefix)
                if item.is_dir
            ]
        except (S3Error, HTTPError, OSError, ValueError) as exc:
            raise self._failed(exc) from exc
        return sorted(name for name in found if NAME.match(name))

    def put(self, name: str, backup: Path) -> None:
        files = sorted(p for p in backup.rglob("*") if p.is_file() and p.name != MANIFEST)
        try:
            for path in [*files, backup / MANIFEST]:  # the manifest last: the backup is whole then
                relative = path.relative_to(backup).as_posix()
                self.client.fput_object(self.bucket, self._key(name, relative), str(path))
        except (S3Error, HTTPError, OSError, ValueError) as exc:
            raise self._failed(exc) from exc

    def fetch(self, name: str, into: Path) -> Path:
        target = into / name
        target.mkdir(parents=True, mode=0o700)
        try:
            for item in self.client.list_objects(self.bucket, prefix=self._key(name), recursive=True):
                relative = (item.object_name or "")[len(self._key(name)) :]
                parts = Path(relative).parts
                if not parts or ".." in parts or Path(relative).is_absolute():
                    continue
                self.client.fget_object(self.bucket, item.object_name or "", str(target / relative))
        except (S3Error, HTTPError, OSError, ValueError) as exc:
            raise self._failed(exc) from exc
        return target

    def delete(self, name: str) -> None:
        try:
            self.client.remove_object(self.bucket, self._key(name, MANIFEST))
            keys = [
                DeleteObject(item.object_name or "")
                for item in self.client.list_objects(self.bucket, prefix=self._key(name), recursive=True)
            ]
            for error in self.client.remove_objects(self.bucket, keys):
                raise StorageError(f"{self.label}{name}: {error.code} removing {error.name}")
        except (S3Error, HTTPError, OSError, ValueError) as exc:
            raise self._failed(exc) from exc


def bucket_of(settings: Settings, bucket: str, prefix: str) -> Bucket:
    return Bucket(
        settings.backup_s3_endpoint or settings.s3_endpoint,
        bucket,
        prefix,
        settings.backup_s3_access_key or settings.s3_access_key,
        settings.backup_s3_secret_key or settings.s3_secret_key,
        settings.backup_s3_region or settings.s3_region,
    )


def destinations(settings: Settings) -> list[Destination]:
    """The configured destinations: the folder first (the backup is written there), then the bucket."""
    found: list[Destination] = []
    if settings.backup_to_dir:
        found.append(LocalFolder(Path(settings.backup_to_dir)))
    if settings.backup_s3_bucket:
        found.append(bucket_of(settings, settings.backup_s3_bucket, settings.backup_s3_prefix))
    return found


def resolve(settings: Settings, where: str, scratch: Path) -> tuple[str, Path]:
    """A backup named on the command line: a directory, or s3://BUCKET/PREFIX/NAME (fetched into
    ``scratch`` with the backup_s3_* settings' server and credentials). Returns (label, directory)."""
    if not where.startswith("s3://"):
        return where, Path(where)
    parts = where[len("s3://") :].rstrip("/").split("/")
    if len(parts) < 2 or not parts[0] or not parts[-1]:
        raise StorageError(f"{where}: give s3://BUCKET/PREFIX/NAME")
    if not (settings.backup_s3_endpoint or settings.s3_endpoint):
        raise StorageError(f"{where}: no S3 server is set (backup_s3_endpoint or s3_endpoint)")
    bucket = bucket_of(settings, parts[0], "/".join(parts[1:-1]))
    return where, bucket.fetch(parts[-1], scratch)
