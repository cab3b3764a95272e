"""The payout engine's audit log (appliance/common/audit.py): operators and their secrets,
controls, ledger modes, pauses, approvals and rejections, credits and debits, exports, each in
the transaction that makes it. Read by the administrator (`appliance audit`)."""

from __future__ import annotations

from typing import Any

from flask import g, has_request_context

from appliance.common import audit
from appliance.engine.models.audit import AuditAnchor, AuditEntry


def record(
    action: str, subject: str, *, before: Any = None, after: Any = None, operator_id: str | None = None
) -> None:
    """Inside the act's write transaction. ``operator_id``: the act is the operator's own, through
    its signed API; otherwise it is the administrator's command on this host."""
    audit.record(
        AuditEntry,
        AuditAnchor,
        actor_kind="operator" if operator_id else "administrator",
        actor=operator_id or _console() or audit.administrator(),
        action=action,
        subject=subject,
        before=before,
        after=after,
    )


def _console() -> str | None:
    """The administrator signed in to the console (appliance/engine/admin), when the act is its."""
    if has_request_context() and g.get("admin_session_id"):
        return f"administrator console (session {g.admin_session_id})"
    return None


def verify() -> audit.Verification:
    return audit.verify(AuditEntry, AuditAnchor)


def entries(*, after_id: int = 0, limit: int = 100) -> list[dict[str, Any]]:
    return list(audit.rows(AuditEntry, after_id=after_id, limit=limit))
