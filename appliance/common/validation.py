"""Field types shared by request schemas (lengths, patterns, bounds)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

NonEmptyStr = Annotated[str, StringConstraints(min_length=1)]


def bounded_str(min_length: int = 0, max_length: int | None = None, pattern: str | None = None) -> object:
    return Annotated[str, StringConstraints(min_length=min_length, max_length=max_length, pattern=pattern)]


NonNegativeInt = Annotated[int, Field(ge=0)]
