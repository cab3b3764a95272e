"""A delivery a dispatcher records on the courier's behalf (issue 28): the courier's phone died or
is out of signal, and the courier (or the recipient) tells the dispatcher by phone. The proof is
the delivery code the recipient gives, or the recipient's name; the cash collected is the
courier's to hand over, as if the courier had recorded it. Audited as the dispatcher's act for
that courier."""

from __future__ import annotations

from typing import Any

from appliance.common.db import write_transaction
from appliance.common.problems import Conflict, Invalid
from appliance.dispatch import audit
from appliance.dispatch.cash.service import record_collection
from appliance.dispatch.db import database
from appliance.dispatch.fiscal.service import queue_sale
from appliance.dispatch.models import Courier
from appliance.dispatch.orders import codes
from appliance.dispatch.orders.serializers import order_body
from appliance.dispatch.orders.service import own_order
from appliance.dispatch.orders.state import ON_THE_WAY, needs_code_to_deliver, transition


def deliver_for_courier(
    company_id: int, order_id: int, actor_id: int, proof: dict[str, Any], master_key: bytes
) -> dict[str, Any]:
    """POST /orders/{id}/deliver-for-courier: picked_up or arrived → delivered (409 otherwise).
    ``otpCode`` (checked, 422 when wrong; it does not spend the courier's attempts, which are
    the app's) or ``recipientName`` is required; cash on delivery defaults to codAmountAmd."""
    code, name = proof.get("otpCode"), proof.get("recipientName")
    if not code and not name:
        raise Invalid(
            "Give the delivery code or the recipient's name.",
            errors=[
                {"field": "otpCode", "message": "the code or recipientName is required"},
                {"field": "recipientName", "message": "the code or recipientName is required"},
            ],
        )
    with write_transaction(database):
        order = own_order(company_id, order_id, lock=True)
        if order.status not in ON_THE_WAY or not order.courier_id:
            raise Conflict(f"Only a picked-up or arrived order can be delivered; this one is {order.status}.")
        if code and not (
            needs_code_to_deliver(order) and codes.matches(master_key, order.public_id, order.otp_hash, code)
        ):
            raise Invalid(
                "The delivery code is wrong.", errors=[{"field": "otpCode", "message": "wrong code"}]
            )
        courier = Courier.get_by_id(order.courier_id)
        collected = None
        if order.is_cod:
            collected = proof.get("collectedAmountAmd")
            if collected is None:
                collected = order.cod_amount_amd
            order.collected_amount_amd = collected
        order.proof_recipient_name = name
        order.proof_notes = proof.get("notes")
        order.proof_photo_key = None
        order.proof_method = "code" if code else "name"
        transition(
            order,
            "delivered",
            actor_id,
            by="on_behalf",
            courierId=str(courier.id),
            onBehalfOfCourier=True,
            proof=order.proof_method,
            collectedAmountAmd=collected,
        )
        if collected:
            record_collection(courier, order, collected)
        queue_sale(order, collected)  # the fiscal receipt's outbox row, in this transaction
        recorded = {"courierId": str(courier.id), "proof": order.proof_method}
        recorded["collectedAmountAmd"] = collected
        audit.record("order.delivered_on_behalf", f"order:{order.id}", company_id=company_id, after=recorded)
        return order_body(order)
