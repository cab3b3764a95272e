"""GET /geo/search shapes."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints

from appliance.common.api import QuerySchema

Kind = Literal["address", "entrance", "street", "place"]


class SearchQuery(QuerySchema):
    q: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)] = Field(
        description="street and number, a place, in Armenian, Russian or Latin letters"
    )
    near: (
        Annotated[str, StringConstraints(pattern=r"^-?\d{1,3}(\.\d{1,12})?,-?\d{1,3}(\.\d{1,12})?$")] | None
    ) = Field(default=None, description="lat,lon: among equals, nearer answers first")
    limit: Annotated[int, Field(ge=1, le=50)] = 10


class Found(BaseModel):
    label: str
    lat: float
    lon: float
    kind: Kind
    apartment: str | None = Field(
        description='the apartment the query named ("6, kv. 12", "6/12", "բն. 12"), for addressDetails'
    )


class SearchResults(BaseModel):
    results: list[Found] = Field(description="best first")
