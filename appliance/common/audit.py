"""The audit log of administrative acts, one per service database (issue 48): who did what, with
what before and after, when and from where, each entry naming the hash of the one before it.

An entry is written in the same transaction as the act it records. Its hash is SHA-256 over the
previous entry's hash and the canonical JSON of its own fields, so an entry edited by hand, or
one taken out of the middle, breaks the chain `appliance audit verify` walks. The database
refuses UPDATE on the table. Old entries are removed only by ``prune`` (the retention setting),
which records the hash of the last removed entry as the chain's anchor; the newest entries can
still be cut off by whoever can write the database, so `verify` prints the head's hash for the
administrator to keep elsewhere (docs/operations.md, Audit log).
"""

from __future__ import annotations

import dataclasses
import getpass
import hashlib
import json
import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import peewee

from appliance.common import clock
from appliance.common.db import is_sqlite

GENESIS = "0" * 64
ACTOR_KINDS = ("user", "integration_key", "operator", "administrator")


def canonical(fields: dict[str, Any]) -> bytes:
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode()


def entry_hash(previous: str, fields: dict[str, Any]) -> str:
    return hashlib.sha256(previous.encode() + b"\n" + canonical(fields)).hexdigest()


def administrator() -> str:
    """The administrator command's actor: the OS user and host that ran it."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return f"{user}@{socket.gethostname()}"


def origin() -> str:
    """Where the act came from: the client address of the request being served, else the command
    line of this host."""
    from flask import has_request_context, request

    if has_request_context():
        return f"http:{request.remote_addr or 'unknown'}"
    return f"cli:{administrator()}"


def fields_of(row: peewee.Model) -> dict[str, Any]:
    return {
        "at": row.at,
        "actorKind": row.actor_kind,
        "actor": row.actor,
        "companyId": row.company_id,
        "action": row.action,
        "subject": row.subject,
        "before": row.before,
        "after": row.after,
        "origin": row.origin,
    }


def _serialise(model: type[peewee.Model]) -> None:
    """One writer of the chain at a time (SQLite's write transaction already is one)."""
    database = model._meta.database
    if not is_sqlite(database):
        database.execute_sql("SELECT pg_advisory_xact_lock(hashtext(%s))", (model._meta.table_name,))


def _anchor(anchor_model: type[peewee.Model]) -> str:
    row = anchor_model.get_or_none(anchor_model.id == 1)
    return row.hash if row is not None else GENESIS


def record(
    model: type[peewee.Model],
    anchor_model: type[peewee.Model],
    *,
    actor_kind: str,
    actor: str,
    action: str,
    subject: str,
    before: Any = None,
    after: Any = None,
    company_id: int | None = None,
) -> None:
    """Append one entry; call inside the write transaction of the act it records."""
    if actor_kind not in ACTOR_KINDS:
        raise ValueError(f"actor_kind {actor_kind!r}")
    _serialise(model)
    last = model.select(model.hash).order_by(model.id.desc()).first()
    previous = last.hash if last is not None else _anchor(anchor_model)
    fields = {
        "at": clock.now().isoformat(timespec="microseconds"),
        "actorKind": actor_kind,
        "actor": str(actor)[:200],
        "companyId": company_id,
        "action": action,
        "subject": subject[:200],
        "before": None if before is None else canonical(before).decode(),
        "after": None if after is None else canonical(after).decode(),
        "origin": origin()[:200],
    }
    model.create(
        at=fields["at"],
        actor_kind=actor_kind,
        actor=fields["actor"],
        company_id=company_id,
        action=action,
        subject=fields["subject"],
        before=fields["before"],
        after=fields["after"],
        origin=fields["origin"],
        previous_hash=previous,
        hash=entry_hash(previous, fields),
    )


@dataclasses.dataclass(frozen=True)
class Verification:
    ok: bool
    entries: int
    head: str  # the last entry's hash (the anchor's when there is none)
    broken_at: int | None  # the id of the first entry that does not follow
    reason: str | None

    def as_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "entries": self.entries,
            "head": self.head,
            "brokenAt": None if self.broken_at is None else str(self.broken_at),
            "reason": self.reason,
        }


def verify(model: type[peewee.Model], anchor_model: type[peewee.Model]) -> Verification:
    """Walk the whole chain from its anchor (inside a connection)."""
    expected = _anchor(anchor_model)
    count = 0
    for row in model.select().order_by(model.id).iterator():
        if row.previous_hash != expected:
            return Verification(False, count, expected, row.id, "names another entry before it")
        if entry_hash(row.previous_hash, fields_of(row)) != row.hash:
            return Verification(False, count, expected, row.id, "was changed after it was written")
        expected = row.hash
        count += 1
    return Verification(True, count, expected, None, None)


def prune(model: type[peewee.Model], anchor_model: type[peewee.Model], older_than: datetime) -> int:
    """Remove the entries written before ``older_than``, moving the anchor to the last one removed;
    inside a write transaction. Returns how many were removed."""
    _serialise(model)
    cutoff = older_than.astimezone(UTC).isoformat(timespec="microseconds")
    last = model.select().where(model.at < cutoff).order_by(model.id.desc()).first()
    if last is None:
        return 0
    removed = model.delete().where(model.id <= last.id).execute()
    anchor_model.insert(id=1, hash=last.hash, through_id=last.id).on_conflict(
        conflict_target=[anchor_model.id],
        update={anchor_model.hash: last.hash, anchor_model.through_id: last.id},
    ).execute()
    return int(removed)


def rows(
    model: type[peewee.Model], *, company_id: int | None = None, after_id: int = 0, limit: int = 100
) -> Iterator[dict[str, Any]]:
    """Entries in order, for reading and exports (``company_id``: one company's only)."""
    query = model.select().where(model.id > after_id)
    if company_id is not None:
        query = query.where(model.company_id == company_id)
    for row in query.order_by(model.id).limit(limit).iterator():
        yield {
            "id": str(row.id),
            "at": row.at,
            "actorKind": row.actor_kind,
            "actor": row.actor,
            "action": row.action,
            "subject": row.subject,
            "before": None if row.before is None else json.loads(row.before),
            "after": None if row.after is None else json.loads(row.after),
            "origin": row.origin,
            "hash": row.hash,
        }


class AuditEntryFields(peewee.Model):
    """The columns of a service's ``audit_entry`` (each service's model mixes these into its own
    base model, bound to its database)."""

    at = peewee.CharField(max_length=40, index=True)  # ISO 8601 UTC, microseconds: sorts as text
    actor_kind = peewee.CharField(max_length=20)
    actor = peewee.CharField(max_length=200)
    company_id = peewee.BigIntegerField(null=True, index=True)
    action = peewee.CharField(max_length=80)
    subject = peewee.CharField(max_length=200)
    before = peewee.TextField(null=True)
    after = peewee.TextField(null=True)
    origin = peewee.CharField(max_length=200)
    previous_hash = peewee.CharField(max_length=64)
    hash = peewee.CharField(max_length=64)


class AuditAnchorFields(peewee.Model):
    """The chain's anchor once old entries were pruned: the hash of the last one removed."""

    id = peewee.IntegerField(primary_key=True)
    hash = peewee.CharField(max_length=64)
    through_id = peewee.BigIntegerField()
