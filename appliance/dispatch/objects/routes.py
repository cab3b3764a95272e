"""PUT and GET /objects/<key>: the embedded object store's presigned links.

Only a valid, unexpired signature opens an object; the content type of an upload must be the one
that was signed; the size is capped. Nothing here lists objects.
"""

from __future__ import annotations

from flask import Blueprint, Response, request, send_file

from appliance.common.objects import LocalObjectStore, ObjectTooLarge, StorageUnavailable
from appliance.common.problems import Forbidden, NotFound, PayloadTooLarge, Unavailable, UnsupportedMediaType
from appliance.dispatch.runtime import runtime

bp = Blueprint("objects", __name__)


def local_store() -> LocalObjectStore | None:
    """The embedded store, or None when objects live in a bucket (clients go there directly)."""
    store = runtime().objects
    return store if isinstance(store, LocalObjectStore) else None


def _signed(op: str, key: str) -> tuple[LocalObjectStore, str] | None:
    """The store and the signed content type when the request carries a valid, unexpired link
    for ``op`` on ``key``."""
    store = local_store()
    if store is None:
        return None
    content_type = store.verify(op, key, request.args.get("link", ""))
    return None if content_type is None else (store, content_type)


@bp.route("/objects/<path:key>", methods=["PUT"])
def put_object(key: str) -> Response:
    signed = _signed("put", key)
    if signed is None:
        raise Forbidden("The upload link is invalid or expired.")
    store, signed_type = signed
    if request.mimetype != signed_type:
        raise UnsupportedMediaType(f"This link accepts {signed_type} only.")
    length = request.content_length
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
    signed = _signed("get", key)
    if signed is None:
        raise Forbidden("The link is invalid or expired.")
    store, _ = signed
    stored = store.get(key)
    if stored is None:
        raise NotFound("No such object.")
    response = send_file(stored.path, mimetype=stored.content_type, max_age=0, conditional=False)
    response.headers["Cache-Control"] = "private, no-store"
    return response
