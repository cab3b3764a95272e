"""Shapes of the realtime endpoints (the event payloads are listed in docs/events.md)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from appliance.common.api import ID_MAX, QuerySchema


class Cursor(BaseModel):
    cursor: int


class StreamQuery(QuerySchema):
    cursor: Annotated[int, Field(ge=0, le=ID_MAX)] | None = None
