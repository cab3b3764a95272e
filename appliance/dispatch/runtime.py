"""The dispatch service's run-time objects: the shared Runtime fields plus its engines, each
built once in create_app (appliance/dispatch/app.py)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, ClassVar

from appliance.common.runtime import Runtime

if TYPE_CHECKING:
    from appliance.common.kept import KeptAnswers
    from appliance.common.mail import Mailer
    from appliance.common.objects import ObjectStore
    from appliance.dispatch.events.stream import StreamSlots
    from appliance.dispatch.messages.sender import RecipientSender
    from appliance.dispatch.routing.engines import Router
    from appliance.dispatch.routing.memo import RouteMemo


@dataclasses.dataclass(kw_only=True)
class DispatchRuntime(Runtime):
    SERVICE: ClassVar[str] = "dispatch"

    router: Router
    # The same router's answers, reused while the same question is asked again (estimates, tracking).
    routes: RouteMemo
    objects: ObjectStore
    mailer: Mailer
    # Messages to recipients (SMS through the company's SMPP provider, e-mail): the worker's engine.
    recipients: RecipientSender
    event_slots: StreamSlots
    # The orders listings this app answered, served again while their orders are unchanged.
    listings: KeptAnswers
    # The tracking views this app answered, served again while nothing they show has changed.
    tracking_views: KeptAnswers


def runtime() -> DispatchRuntime:
    return DispatchRuntime.current()
