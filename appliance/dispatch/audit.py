"""The dispatch service's audit log (appliance/common/audit.py): every administrative act of a
company (members and roles, settings, depots, integration keys and webhooks, exports, deliveries
recorded on a courier's behalf) in the transaction that makes it; owners read their company's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from flask import g, has_request_context

from appliance.common import audit
from appliance.dispatch.models.audit import AuditAnchor, AuditEntry


def record(
    action: str,
    subject: str,
    *,
    company_id: int,
    before: Any = None,
    after: Any = None,
    caller: Any = None,
) -> None:
    """Inside the act's write transaction. The actor is ``caller`` or else the request's signed-in
    member or integration key; outside a request, the administrator's command on this host."""
    if caller is None and has_request_context():
        caller = g.get("caller")
    if caller is None:
        kind, actor = "administrator", audit.administrator()
    elif getattr(caller, "key_id", None) is not None:
        kind, actor = "integration_key", f"key:{caller.key_id}"
    else:
        kind, actor = "user", f"user:{caller.user.id} {caller.user.email or caller.user.display_name}"
    audit.record(
        AuditEntry,
        AuditAnchor,
        actor_kind=kind,
        actor=actor,
        action=action,
        subject=subject,
        before=before,
        after=after,
        company_id=company_id,
    )


def verify() -> audit.Verification:
    return audit.verify(AuditEntry, AuditAnchor)


def entries(company_id: int | None = None, *, after_id: int = 0, limit: int = 100) -> list[dict[str, Any]]:
    return list(audit.rows(AuditEntry, company_id=company_id, after_id=after_id, limit=limit))


CHANGES = ("before", "after")
CSV_COLUMNS = ("id", "at", "actor_kind", "actor", "action", "subject", "before", "after", "origin", "hash")


def csv_row(entry: dict[str, Any]) -> list[object]:
    as_text = {
        k: "" if entry[k] is None else json.dumps(entry[k], ensure_ascii=False) for k in ("before", "after")
    }
    head = [entry[k] for k in ("id", "at", "actorKind", "actor", "action", "subject")]
    return [*head, as_text["before"], as_text["after"], entry["origin"], entry["hash"]]


def csv_rows(company_id: int | None) -> Iterator[list[object]]:
    """Every entry (of one company, or all), a page at a time, as CSV rows."""
    after = 0
    while True:
        page = entries(company_id, after_id=after, limit=500)
        yield from (csv_row(entry) for entry in page)
        if len(page) < 500:
            return
        after = int(page[-1]["id"])
