"""The deployment's custody key fingerprint in the engine database: recorded by the first process
that uses a key (derives an address or signs), compared by every process after it. A node given
another key (a new node set up with `custody init` of its own, a wrong restore) refuses to derive
or sign, says why in `health`, and fails readiness, instead of handing out deposit addresses of
another seed into the shared database (docs/engine-treasury.md, Custody key)."""

from __future__ import annotations

import logging
import os

import peewee

from appliance.common.clock import now
from appliance.common.db import UTCDateTimeField, connection, write_transaction
from appliance.common.health import Check, Probe
from appliance.engine.custody import ENVIRONMENT, CustodyError, CustodyKeys
from appliance.engine.db import database
from appliance.engine.models import BaseModel

log = logging.getLogger("appliance.engine.custody")

ONLY_ROW = 1
PLAIN_WARNING = (
    "custody.key is not encrypted and the signer runs as this user: any process of the user can read "
    "it; only an encrypted key (`appliance custody encrypt`) or a signer run as its own OS user "
    "protects it (docs/security.md, Deployments)"
)
ENVIRONMENT_WARNING = "the custody key is given in the clear in APPLIANCE_CUSTODY_KEY"


class CustodyFingerprint(BaseModel):
    id = peewee.IntegerField(primary_key=True)
    fingerprint = peewee.CharField(max_length=16)
    recorded_at = UTCDateTimeField(default=now)

    class Meta:
        table_name = "custody_fingerprint"


def recorded() -> CustodyFingerprint | None:
    return CustodyFingerprint.get_or_none(CustodyFingerprint.id == ONLY_ROW)


def refusal(ours: str, row: CustodyFingerprint) -> str | None:
    if row.fingerprint == ours:
        return None
    return (
        f"this node's custody key (fingerprint {ours}) is not the deployment's (fingerprint "
        f"{row.fingerprint}, recorded {row.recorded_at:%Y-%m-%d %H:%M} UTC): it derives no address "
        "and signs nothing; give it the deployment's custody.key and restart"
    )


def _record_or_compare(fingerprint: str) -> str | None:
    row = recorded()
    if row is None:
        # Two first uses at once (two nodes): the first insert wins, the other compares with it.
        CustodyFingerprint.insert(
            id=ONLY_ROW, fingerprint=fingerprint, recorded_at=now()
        ).on_conflict_ignore().execute()
        row = recorded()
        assert row is not None
        if row.fingerprint == fingerprint:
            log.info("custody key fingerprint %s recorded as the deployment's", fingerprint)
    return refusal(fingerprint, row)


def guard(fingerprint: str) -> str | None:
    """Custody's guard: record the fingerprint at first use, else compare with the recorded one.
    Inside the caller's transaction when there is one (an address derived while allocating it)."""
    with connection(database):
        row = None if database.in_transaction() else recorded()
        if row is not None:
            # Recorded already: compared without the write lock, which the signer process must
            # never wait for (the serving process asking it to sign holds it meanwhile).
            found = refusal(fingerprint, row)
        elif database.in_transaction():
            found = _record_or_compare(fingerprint)
        else:
            with write_transaction(database):
                found = _record_or_compare(fingerprint)
    if found is not None:
        log.error("%s", found)
    return found


def custody_probe(custody: CustodyKeys | None) -> Probe:
    """Readiness: a key other than the recorded one fails; a key in the clear passes with a
    warning; no key at all passes (the engine serves and payouts wait, as the specification says)."""

    def probe() -> Check:
        if custody is None:
            return Check("pass", "no custody key: payouts wait and deposit addresses answer 503")
        with connection(database):
            row = recorded()
        try:
            # Under `serve` these come from the signer process, asked afresh: a signer that does
            # not answer fails readiness (payouts wait and deposit addresses answer 503 meanwhile).
            describe = getattr(custody, "describe", None)
            described = describe() if describe is not None else {}
            data = {"fingerprint": custody.fingerprint, "encrypted": custody.encrypted}
        except CustodyError as exc:
            return Check("fail", str(exc))
        if row is not None and (why := refusal(custody.fingerprint, row)) is not None:
            return Check("fail", why, data)
        # A plain key read by a signer of another OS user is out of this user's reach (that user's
        # files are not readable here): no warning then. The key in the environment always warns.
        apart = described.get("uid", os.getuid()) != os.getuid()
        if not custody.encrypted and (custody.source == ENVIRONMENT or not apart):
            warning = ENVIRONMENT_WARNING if custody.source == ENVIRONMENT else PLAIN_WARNING
            return Check("pass", "warning: " + warning, {**data, "warning": warning})
        return Check("pass", "", data)

    return probe
