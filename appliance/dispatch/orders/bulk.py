"""Bulk actions on orders (POST /orders/bulk): make ready, assign, cancel with a reason, or move to
another day, for many orders at once. Each order's change is its own transaction through the same
service function a single call uses (no second set of rules), so one order that cannot move never
holds back the others; each gets its own result. Under an Idempotency-Key the whole answer is kept,
so a retried call (a lost answer) replays it instead of acting twice."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from typing import Any

import peewee

from appliance.common import clock
from appliance.common.db import write_transaction
from appliance.common.problems import ApiError, BadRequest, Conflict, Invalid
from appliance.dispatch.db import database
from appliance.dispatch.models import BulkRequest
from appliance.dispatch.orders import service
from appliance.dispatch.orders.service import own_order


def problem_body(error: ApiError) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": error.type,
        "title": error.title,
        "status": error.status,
        "detail": error.detail,
    }
    if error.code:
        body["code"] = error.code
    if error.errors:
        body["errors"] = [{"field": e["field"], "message": e["message"]} for e in error.errors]
    return body


def _check(request: dict[str, Any]) -> None:
    needs = {"assign": "courierId", "cancel": "reason", "move": "date"}.get(request["action"])
    if needs and request.get(needs) is None:
        raise BadRequest(
            f"{needs} is required for {request['action']}.", errors=[{"field": needs, "message": "required"}]
        )
    if len(set(request["orderIds"])) != len(request["orderIds"]):
        raise Invalid("An order is named twice.", errors=[{"field": "orderIds", "message": "duplicates"}])


def _moved_window(order: Any, day: date) -> dict[str, datetime]:
    """The order's window on ``day`` (Yerevan), its times of day kept; the whole day without one."""
    if order.window_start is None or order.window_end is None:
        start = datetime.combine(day, time(0), tzinfo=clock.YEREVAN)
        return {"deliveryWindowStart": start, "deliveryWindowEnd": start + timedelta(days=1)}
    shift = day - order.window_start.astimezone(clock.YEREVAN).date()
    return {"deliveryWindowStart": order.window_start + shift, "deliveryWindowEnd": order.window_end + shift}


def _action(
    company_id: int, actor_id: int, request: dict[str, Any], master_key: bytes
) -> Callable[[int], dict[str, Any]]:
    action = request["action"]
    if action == "ready":
        return lambda oid: service.change_status(company_id, oid, actor_id, "ready", None, master_key)
    if action == "cancel":
        return lambda oid: service.change_status(
            company_id, oid, actor_id, "cancelled", request["reason"], master_key
        )
    if action == "assign":
        courier_id = request["courierId"]

        def assign(oid: int) -> dict[str, Any]:
            # Each queues after the courier's last stop, in the order given.
            return service.assign(company_id, oid, courier_id, actor_id)["order"]

        return assign

    def move(oid: int) -> dict[str, Any]:
        order = own_order(company_id, oid)
        if order.status not in {"draft", "ready"}:
            raise Conflict(f"Only draft and ready orders move to another day; this one is {order.status}.")
        return service.update_order(
            company_id, oid, actor_id, _moved_window(order, request["date"]), master_key
        )

    return move


def run(
    company_id: int, actor_id: int, request: dict[str, Any], key: str | None, master_key: bytes
) -> dict[str, Any]:
    _check(request)
    digest = hashlib.sha256(json.dumps(request, sort_keys=True, default=str).encode()).hexdigest()
    if key is not None:
        kept = _claim(company_id, key, digest)
        if kept is not None:
            return _replayed(kept, digest)
    act = _action(company_id, actor_id, request, master_key)
    results = []
    for order_id in request["orderIds"]:
        try:
            act(order_id)
            results.append({"orderId": str(order_id), "ok": True})
        except ApiError as error:
            results.append({"orderId": str(order_id), "ok": False, "problem": problem_body(error)})
    answer = {"results": results}
    if key is not None:
        with write_transaction(database):
            BulkRequest.update(response=json.dumps(answer)).where(
                (BulkRequest.company == company_id) & (BulkRequest.key == key)
            ).execute()
    return answer


# A call that claimed its key and died before answering (a killed process) leaves its claim: after
# this long another call with the key runs it again (each order's change is its own transaction, so
# what was done answers 409 the second time and nothing is done twice).
ABANDONED = timedelta(minutes=10)


def _claim(company_id: int, key: str, digest: str) -> BulkRequest | None:
    """Claim ``key`` for this call (None), or the row of the call that holds it."""
    with write_transaction(database):
        kept = BulkRequest.get_or_none((BulkRequest.company == company_id) & (BulkRequest.key == key))
        if kept is None:
            try:
                with database.atomic():
                    BulkRequest.create(
                        company=company_id, key=key, request_hash=digest, response="", created_at=clock.now()
                    )
                return None
            except peewee.IntegrityError:
                kept = BulkRequest.get((BulkRequest.company == company_id) & (BulkRequest.key == key))
        if not kept.response and kept.request_hash == digest and kept.created_at < clock.now() - ABANDONED:
            BulkRequest.update(created_at=clock.now()).where(BulkRequest.id == kept.id).execute()
            return None
        return kept


def _replayed(kept: BulkRequest, digest: str) -> dict[str, Any]:
    if kept.request_hash != digest:
        raise Conflict(
            "This Idempotency-Key was used for another bulk request.", code="idempotency_key_reused"
        )
    if not kept.response:
        raise Conflict("A bulk request with this Idempotency-Key is still running.", code="in_progress")
    return json.loads(kept.response)
