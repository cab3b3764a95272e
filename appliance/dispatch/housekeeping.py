"""Housekeeping a running install needs, as one leased job inside `appliance serve` (one process
at a time holds the lease; every step is idempotent):

- GPS points older than ``gps_retention_days`` are deleted, except each courier's latest fix;
- realtime events older than ``event_retention_days`` (a stream reconnecting from further back
  starts from the present, as it would after any gap);
- links that expired more than 30 days ago, sessions revoked or expired more than 30 days ago with
  their refresh tokens, courier status-request replay rows older than 7 days, and outgoing mail
  sent or given up more than 30 days ago;
- shifts still open after ``shift_auto_end_hour`` (Yerevan local time) of a day later than the
  one they started on end automatically, recorded as a ``courier.shift_ended`` event with reason
  ``auto_end`` (nobody ended them);
- audit log entries older than ``audit_retention_days`` (the chain's anchor moves past them).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

import peewee

from appliance.common import audit, clock
from appliance.common.db import write_transaction
from appliance.common.lease import SingletonLease
from appliance.dispatch.db import database
from appliance.dispatch.events.store import record_event
from appliance.dispatch.models import (
    AuthSession,
    Courier,
    CourierLocation,
    JobLease,
    LinkToken,
    OutgoingMail,
    RealtimeEvent,
    RefreshToken,
    Shift,
    StatusRequest,
)
from appliance.dispatch.models.audit import AuditAnchor, AuditEntry
from appliance.settings import Settings

log = logging.getLogger("appliance.dispatch.housekeeping")
NAME = "housekeeping"
KEEP_EXPIRED = timedelta(days=30)
KEEP_REPLAYS = timedelta(days=7)


def shift_cutoff(now: datetime, hour: int) -> datetime:
    """The latest moment at ``hour`` (Yerevan) not after ``now``: shifts started before it and still
    open are from an earlier working day."""
    local = now.astimezone(clock.YEREVAN)
    cutoff = local.replace(hour=hour, minute=0, second=0, microsecond=0)
    if cutoff > local:
        cutoff -= timedelta(days=1)
    return cutoff


class Housekeeping:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.interval = timedelta(minutes=settings.housekeeping_minutes)
        self.turn = SingletonLease.of(JobLease, NAME, duration=self.interval)

    def _due(self) -> bool:
        """Whether this process runs housekeeping now: the lease lasts the whole interval and is
        not taken again before it ends, even by its holder (one run per interval)."""
        return self.turn.take(due=lambda row, moment: not (row.lease_until and row.lease_until > moment))

    def run_pass(self) -> int:
        """Run once per interval across all processes; returns the number of rows changed."""
        if not self._due():
            return 0
        done = self.run()
        JobLease.update(last_run_at=clock.now()).where(JobLease.name == NAME).execute()
        return done

    def run(self) -> int:
        moment = clock.now()
        changed = self._prune(moment)
        if self.settings.shift_auto_end_hour >= 0:
            changed += self._end_forgotten_shifts(moment)
        if changed:
            log.info("housekeeping: %s rows pruned or closed", changed)
        return changed

    def _prune(self, moment: datetime) -> int:
        gps_cutoff = moment - timedelta(days=self.settings.gps_retention_days)
        newer = CourierLocation.alias("newer")
        has_newer = peewee.fn.EXISTS(
            newer.select(peewee.SQL("1")).where(
                (newer.courier == CourierLocation.courier) & (newer.captured_at > CourierLocation.captured_at)
            )
        )
        changed = 0
        with write_transaction(database):
            changed += (
                CourierLocation.delete()
                .where((CourierLocation.captured_at < gps_cutoff) & has_newer)
                .execute()
            )
            changed += (
                RealtimeEvent.delete()
                .where(RealtimeEvent.created_at < moment - timedelta(days=self.settings.event_retention_days))
                .execute()
            )
            changed += LinkToken.delete().where(LinkToken.expires_at < moment - KEEP_EXPIRED).execute()
            live = RefreshToken.select(RefreshToken.session).where(
                RefreshToken.expires_at >= moment - KEEP_EXPIRED
            )
            stale_sessions = AuthSession.select(AuthSession.id).where(
                (AuthSession.revoked_at < moment - KEEP_EXPIRED)
                | (AuthSession.id.not_in(live) & (AuthSession.created_at < moment - KEEP_EXPIRED))
            )
            stale_ids = [row.id for row in stale_sessions]
            if stale_ids:
                RefreshToken.delete().where(RefreshToken.session.in_(stale_ids)).execute()
                changed += AuthSession.delete().where(AuthSession.id.in_(stale_ids)).execute()
            changed += (
                StatusRequest.delete().where(StatusRequest.created_at < moment - KEEP_REPLAYS).execute()
            )
            # Mail handed over or given up: its row (subject, body with the links' tokens removed)
            # is kept a month for questions about it, then goes.
            changed += (
                OutgoingMail.delete()
                .where(
                    OutgoingMail.status.in_(("sent", "failed"))
                    & (OutgoingMail.created_at < moment - KEEP_EXPIRED)
                )
                .execute()
            )
            if self.settings.audit_retention_days > 0:
                cutoff = moment - timedelta(days=self.settings.audit_retention_days)
                changed += audit.prune(AuditEntry, AuditAnchor, cutoff)
        return changed

    def _end_forgotten_shifts(self, moment: datetime) -> int:
        cutoff = shift_cutoff(moment, self.settings.shift_auto_end_hour)
        forgotten = list(Shift.select().where(Shift.open_flag.is_null(False) & (Shift.started_at < cutoff)))
        for shift in forgotten:
            with write_transaction(database):
                closed = (
                    Shift.update(ended_at=moment, on_break=False, open_flag=None)
                    .where((Shift.id == shift.id) & Shift.open_flag.is_null(False))
                    .execute()
                )
                if not closed:
                    continue
                courier = Courier.get_by_id(shift.courier_id)
                Courier.update(online=False).where(Courier.id == courier.id).execute()
                payload: dict[str, Any] = {
                    "courierId": str(courier.id),
                    "shiftId": str(shift.id),
                    "endedBy": None,
                    "reason": "auto_end",
                }
                record_event(courier.company_id, "courier.shift_ended", payload)
        return len(forgotten)
