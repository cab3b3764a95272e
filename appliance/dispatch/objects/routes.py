"""PUT and GET /objects/<key>: the embedded object store's presigned links.

Only a valid, unexpired signature opens an object; the content type of an upload must be the one
that was signed; the size is capped. Nothing here lists objects.
"""

from __future__ import annotations

from flask import Blueprint, Flask, Response, request, send_file

from appliance.common.objects import LocalObjectStore, ObjectTooLarge, StorageUnavailable
from appliance.common.problems import Forbidden, NotFound, PayloadTooLarge, Unavailable, UnsupportedMediaType
from appliance.common.s3store import S3ObjectStore
from appliance.dispatch.runtime import runtime

bp = Blueprint("objects", __name__)


def init_app(app: Flask) -> None:
    rt = app.extensions["dispatch"]
    settings = rt.settings
    if settings.s3_endpoint:
        # Clients upload to and download from the bucket itself (presigned); these routes stay
        # for the local store only.
        store = S3ObjectStore(
            settings.s3_endpoint,
            settings.s3_bucket,
            settings.s3_access_key,
            settings.s3_secret_key,
            settings.s3_region,
            lifetime_seconds=settings.presigned_url_seconds,
            max_bytes=settings.max_upload_bytes,
        )
        rt.engines["objects"] = store
        rt.health.register("objects", store.probe)
        return
    rt.engines["objects"] = LocalObjectStore(
        settings.data_dir / "objects",
        rt.master_key,
        settings.dispatch_public_url,
        lifetime_seconds=settings.presigned_url_seconds,
        max_bytes=settings.max_upload_bytes,
    )


def object_store() -> LocalObjectStore:
    return runtime().engines["objects"]


def _signed(op: str, key: str, content_type: str = "") -> bool:
    if not isinstance(object_store(), LocalObjectStore):  # objects live in the bucket
        return False
    args = request.args
    if args.get("op") != op:
        return False
    return object_store().verify(op, key, args.get("exp", ""), args.get("sig", ""), content_type)


@bp.route("/objects/<path:key>", methods=["PUT"])
def put_object(key: str) -> Response:
    signed_type = request.args.get("ct", "")
    if not _signed("put", key, signed_type):
        raise Forbidden("The upload link is invalid or expired.")
    if request.mimetype != signed_type:
        raise UnsupportedMediaType(f"This link accepts {signed_type} only.")
    length = request.content_length
    store = object_store()
    # The app's body limit (for JSON) is smaller than a photo's: this route has its own.
    request.max_content_length = store.max_bytes
    if length is not None and length > store.max_bytes:
        raise PayloadTooLarge(f"At most {store.max_bytes} bytes.")
    try:
        store.put(key, request.stream, signed_type)
    except ObjectTooLarge:
        raise PayloadTooLarge(f"At most {store.max_bytes} bytes.") from None
    except StorageUnavailable:
        raise Unavailable("Object storage is unavailable.") from None
    return Response(status=200)


@bp.route("/objects/<path:key>", methods=["GET"])
def get_object(key: str) -> Response:
    if not _signed("get", key):
        raise Forbidden("The link is invalid or expired.")
    stored = object_store().get(key)
    if stored is None:
        raise NotFound("No such object.")
    response = send_file(stored.path, mimetype=stored.content_type, max_age=0, conditional=False)
    response.headers["Cache-Control"] = "private, no-store"
    return response
