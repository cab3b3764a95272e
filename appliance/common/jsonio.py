"""JSON answers encoded with orjson: several times faster than the standard library's encoder on
the large answers (a day of 2,000 orders) and the small hot ones alike, and the same JSON: UTF-8
text as is (no \\u escapes), keys in the order the code wrote them, integers exact."""

from __future__ import annotations

import dataclasses
import decimal
import json
from typing import Any

import orjson
from flask import Response
from flask.json.provider import JSONProvider

OPTIONS = orjson.OPT_NON_STR_KEYS


def _default(value: Any) -> Any:
    """What orjson does not encode by itself, encoded as Flask's own provider does."""
    if isinstance(value, decimal.Decimal):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if hasattr(value, "__html__"):
        return str(value.__html__())
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def dumps_bytes(value: Any) -> bytes:
    try:
        return orjson.dumps(value, default=_default, option=OPTIONS)
    except TypeError:
        # orjson refuses integers beyond 64 bits (an id or amount echoed back from bad input):
        # the standard library writes them exactly.
        return json.dumps(value, default=_default, ensure_ascii=False, separators=(",", ":")).encode()


class OrjsonProvider(JSONProvider):
    mimetype = "application/json"

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        return dumps_bytes(obj).decode()

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        return orjson.loads(s)

    def response(self, *args: Any, **kwargs: Any) -> Response:
        value = self._prepare_response_obj(args, kwargs)
        return Response(dumps_bytes(value), mimetype=self.mimetype)
