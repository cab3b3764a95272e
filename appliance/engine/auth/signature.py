"""Verification of signed requests (the engine specification, section 5).

Every failure answers the same opaque 401; the real cause goes to the log line that carries the
request id. For an unknown operator the HMAC still runs against a placeholder secret of the same
shape, so timing does not reveal which operators exist. A signature is admitted once: it is
recorded in seen_signature (shared by every process through the database) until the window
ends; a repeat, even of an identical request a moment later, is refused.
"""

from __future__ import annotations

import dataclasses
import functools
import hmac
import logging
import re
from collections.abc import Callable

from flask import Response, after_this_request, g, request

from appliance.common import clock
from appliance.common.api import endpoint
from appliance.common.compiled import prepare_insert
from appliance.common.db import write_transaction
from appliance.common.problems import ApiError, BadRequest, Unauthorized
from appliance.common.webapp import problem_response, request_id
from appliance.engine.auth.operators import OPERATOR_ID, SecretsUnreadable, secrets_of
from appliance.engine.db import database
from appliance.engine.models import SeenSignature
from appliance.engine.problems import render
from appliance.engine.protocol import body_hash, canonical_string, sign_request
from appliance.engine.runtime import runtime

log = logging.getLogger("appliance.engine.auth")

OPAQUE_DETAIL = "Request authentication failed."
IDEMPOTENCY_KEY = re.compile(r"^[A-Za-z0-9:_-]{8,128}$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_DIGITS = re.compile(r"^[0-9]{1,12}$")
PLACEHOLDER_SECRET = "0" * 64


class _Denied(Exception):
    def __init__(self, cause: str) -> None:
        super().__init__(cause)
        self.cause = cause


def _deny(cause: str, operator_id: str, rid: str | None = None) -> Unauthorized:
    log.warning(
        "authentication failed: %s operator=%r request_id=%s", cause, operator_id[:80], rid or request_id()
    )
    return Unauthorized(OPAQUE_DETAIL)


def _diagnose(secrets: list[str], signature: str, timestamp: str, key: str | None, body: bytes) -> str:
    """Name the most likely mistake of a signature that did not verify (for the log only)."""
    path_with_query = request.full_path.rstrip("?")
    for secret in secrets:
        if request.query_string and hmac.compare_digest(
            sign_request(secret, canonical_string(request.method, path_with_query, timestamp, key, body)),
            signature,
        ):
            return "query string signed"
        four_lines = "\n".join([request.method.upper(), request.path, timestamp, body_hash(body)])
        if hmac.compare_digest(sign_request(secret, four_lines), signature):
            return "four-line canonical string (idempotency line omitted)"
        if key is not None and hmac.compare_digest(
            sign_request(secret, canonical_string(request.method, request.path, timestamp, None, body)),
            signature,
        ):
            return "Idempotency-Key sent but not signed"
        if key is None:
            return "signature mismatch (an Idempotency-Key signed but not sent, or a wrong secret)"
    return "signature mismatch"


def verify_request(*, defer_admission: bool = False) -> str:
    """Authenticate the current request; returns the operator id or raises the opaque 401.

    ``defer_admission``: the signature is verified but recorded as seen by the route, inside the
    route's own write transaction (``pending_admission``), so that a payout submission writes once."""
    operator_id = request.headers.get("X-Operator-Id", "")
    timestamp = request.headers.get("X-Timestamp", "")
    signature = request.headers.get("X-Signature", "")
    key = request.headers.get("Idempotency-Key")
    body = request.get_data(cache=True)
    rt = runtime()
    try:
        if not operator_id or not timestamp or not signature:
            raise _Denied("missing signature headers")
        if not _DIGITS.match(timestamp):
            raise _Denied("malformed timestamp")
        if not _HEX64.match(signature):
            raise _Denied("malformed signature")
        known = bool(OPERATOR_ID.match(operator_id))
        try:
            secrets = secrets_of(rt.master_key, operator_id) if known else []
        except SecretsUnreadable as unreadable:
            raise _Denied(str(unreadable)) from None
        canonical = canonical_string(request.method, request.path, timestamp, key, body)
        # Always at least one HMAC, with a placeholder when the operator is unknown.
        candidates = secrets or [PLACEHOLDER_SECRET]
        matched = False
        for secret in candidates:
            matched = hmac.compare_digest(sign_request(secret, canonical), signature) or matched
        if not matched:
            # The same diagnostic work for unknown operators, against the placeholder.
            cause = _diagnose(candidates, signature, timestamp, key, body)
            raise _Denied(cause if secrets else "unknown operator")
        if not secrets:
            raise _Denied("unknown operator")
        drift = clock.unix() - int(timestamp)
        window = rt.settings.signature_window_seconds
        if abs(drift) > window:
            raise _Denied(f"clock drift of {drift} s beyond {window} s")
        admission = Admission(signature, int(timestamp) + window + 1, operator_id, request_id())
    except _Denied as denied:
        raise _deny(denied.cause, operator_id) from None
    if defer_admission:
        g.admission = admission
    else:
        admission.record_alone()
    g.operator_id = operator_id
    return operator_id


@dataclasses.dataclass(frozen=True)
class Admission:
    """A verified signature to record as seen, once: a second use of it is a replay (401)."""

    signature: str
    expires_at: int
    operator_id: str
    request_id: str  # kept: the record may be written by another request's thread (group commit)

    def record(self) -> None:
        """Record it inside the caller's write transaction."""
        self.recorder()()

    def recorder(self) -> Callable[[], None]:
        """``record`` with its statement built and bound now, to run later inside the caller's
        write transaction (the group commit's batch only executes it)."""
        seen = prepare_insert(
            SeenSignature(signature=self.signature, expires_at=self.expires_at), keep_existing=True
        )
        # Prune now and then (about one request in 64) so the table stays the size of the window.
        prune = self.signature[-2:] < "04"

        def record() -> None:
            if not seen.run():
                raise _deny("replayed signature", self.operator_id, self.request_id)
            if prune:
                SeenSignature.delete().where(SeenSignature.expires_at < clock.unix()).execute()

        return record

    def record_alone(self) -> None:
        with write_transaction(database):
            self.record()


def pending_admission() -> Admission:
    """The signature a deferring guard verified, for the route to record in its transaction."""
    g.admission_taken = True
    return g.admission


def current_operator() -> str:
    return g.operator_id


@dataclasses.dataclass(frozen=True)
class SignedGuard:
    """Every /v1 route. The signature is checked first, before anything about the request's
    shape: a caller who is not authenticated gets the opaque 401 and learns nothing else.
    ``idempotency`` then demands a well-formed Idempotency-Key (400), before the route's path,
    query and body are validated (400, 415)."""

    idempotency: bool = False
    # The route records the signature in its own write transaction (see verify_request).
    deferred_admission: bool = False

    @property
    def security(self) -> list[dict[str, list[str]]]:
        return [{"operatorSignature": []}]

    @property
    def description(self) -> str:
        return (
            "signed request (X-Operator-Id, X-Timestamp, X-Signature), verified before anything else: "
            "a request that is not signed as docs/engine-auth.md says is 401, whatever else is wrong"
        )

    @property
    def error_statuses(self) -> tuple[int, ...]:
        return (400, 401) if self.idempotency else (401,)

    def check(self) -> None:
        verify_request(defer_admission=self.deferred_admission)
        if self.deferred_admission:
            # Refused by validation before the route takes the admission: the signature is used
            # up all the same, so that a repeat of this request is a replay (401) like any other.
            after_this_request(_record_untaken_admission)
        key = request.headers.get("Idempotency-Key")
        if self.idempotency and key is None:
            raise BadRequest(
                "The Idempotency-Key header is required.",
                errors=[{"field": "Idempotency-Key", "message": "required"}],
            )
        if key is not None and not IDEMPOTENCY_KEY.match(key):
            raise BadRequest(
                "Idempotency-Key must be 8..128 characters of [A-Za-z0-9:_-].",
                errors=[{"field": "Idempotency-Key", "message": "malformed"}],
            )


def _record_untaken_admission(response: Response) -> Response:
    """After a request whose verified signature the route never took (a 4xx of validation):
    record it now, alone. Should it be a replay after all, the answer becomes that 401."""
    admission = g.get("admission")
    if admission is None or g.get("admission_taken") or not 400 <= response.status_code < 500:
        return response
    g.admission_taken = True
    try:
        admission.record_alone()
    except ApiError as refused:
        return problem_response(refused, render)
    return response


SIGNED = SignedGuard()
SIGNED_IDEMPOTENT = SignedGuard(idempotency=True)
# Payout submission: the replay record and the payout are written in one transaction.
SIGNED_SUBMISSION = SignedGuard(idempotency=True, deferred_admission=True)

# The decorator of every /v1 route: signed, and the signature checked first (auth_first), so that
# nothing about a request's headers, path, query or body is checked for a caller not authenticated
# (the specification: any signature failure is 401). Only what must come before reading the body
# at all (routing's 404 and 405, a body over the size limit: 413) answers without a signature.
signed_endpoint = functools.partial(endpoint, guard=SIGNED, auth_first=True)
