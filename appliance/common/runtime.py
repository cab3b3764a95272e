"""What a service's code needs at run time, built once by the service's app factory and kept on
the Flask app, so that nothing is read or opened at import time.

The fields both services share live here; each service extends the class with its own typed
engines (the dispatch service's router, object store, mailer…; the engine's chains and
custody) and names the Flask extension it is kept under."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar, Self

from flask import Flask, current_app

if TYPE_CHECKING:
    from appliance.common.health import HealthRegistry
    from appliance.settings import Settings

# A background worker started by `appliance serve`: it runs until the event is set.
Worker = Callable[[threading.Event], None]


@dataclasses.dataclass(kw_only=True)
class Runtime:
    # The key of app.extensions this runtime is kept under ("dispatch", "engine").
    SERVICE: ClassVar[str] = ""

    settings: Settings
    master_key: bytes
    health: HealthRegistry
    # Background workers (name, fn(stop_event)); each claims its work from the database so that
    # several processes can run them side by side.
    workers: list[tuple[str, Worker]] = dataclasses.field(default_factory=list)

    def install(self, app: Flask) -> None:
        if not self.SERVICE:
            raise TypeError("a service's Runtime names its SERVICE")
        app.extensions[self.SERVICE] = self

    @classmethod
    def of(cls, app: Flask) -> Self:
        runtime = app.extensions[cls.SERVICE]
        if not isinstance(runtime, cls):
            raise TypeError(f"app.extensions[{cls.SERVICE!r}] is not a {cls.__name__}")
        return runtime

    @classmethod
    def current(cls) -> Self:
        """The runtime of the app handling this request (or in this app context)."""
        return cls.of(current_app)
