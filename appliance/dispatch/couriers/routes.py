"""Couriers (dispatcher side)."""

from __future__ import annotations

from flask import Blueprint, Response

from appliance.common.api import endpoint
from appliance.common.problems import BadRequest
from appliance.dispatch.auth.guards import D, O, current_caller
from appliance.dispatch.couriers import pay, schemas, service
from appliance.dispatch.couriers.serializers import courier_body

bp = Blueprint("couriers", __name__)
TAGS = ["Couriers"]


@endpoint(bp, "GET", "/couriers", guard=D, response=schemas.CourierList, tags=TAGS)
def list_couriers():
    """Couriers with latest location, open shift, last shift and outstanding cash."""
    return {"couriers": service.list_couriers(current_caller().company_id)}


@endpoint(
    bp,
    "POST",
    "/couriers",
    guard=D,
    body=schemas.CourierCreate,
    status=201,
    response=schemas.CourierEnvelope,
    errors=(409,),
    tags=TAGS,
)
def create_courier(body: schemas.CourierCreate):
    """Create a courier who signs in at once (POST /auth/login, the courier app) with the email and
    the password given here. The password is a company-set password: it opens this company's
    courier membership only, and stops once the courier proves the address (a sign-in, password
    or sign-up link used); the answer is the same whether or not the email has an account
    elsewhere. 409 `already_member`: the address is already a member of this company
    (docs/identity.md, *Company-set passwords*)."""
    return {"courier": service.create_courier(current_caller(), body.model_dump())}


@endpoint(
    bp,
    "GET",
    "/couriers/<int:courier_id>",
    guard=D,
    response=schemas.CourierEnvelope,
    errors=(404,),
    tags=TAGS,
)
def get_courier(courier_id: int):
    """Profile and latest location."""
    courier = service.own_courier(current_caller().company_id, courier_id)
    return {"courier": courier_body(courier, detailed=True)}


@endpoint(
    bp,
    "PATCH",
    "/couriers/<int:courier_id>",
    guard=D,
    body=schemas.CourierPatch,
    response=schemas.CourierEnvelope,
    errors=(404, 409),
    tags=TAGS,
)
def patch_courier(courier_id: int, body: schemas.CourierPatch):
    """Edit displayName, phone, vehicleLabel or active, or set a new company-set `password` for a
    courier who has not proven their address (the sessions opened with the old one end). 409
    `address_proven`: the courier proved their address, so only they change their password;
    `not_courier`, `no_address`, `already_member` as described in docs/identity.md."""
    changes = {name: getattr(body, name) for name in body.model_fields_set}
    for required in ("displayName", "active", "password"):
        if required in changes and changes[required] is None:
            raise BadRequest(
                f"{required} cannot be null.", errors=[{"field": required, "message": "must not be null"}]
            )
    caller = current_caller()
    return {"courier": service.update_courier(caller.company_id, courier_id, changes, caller.user.id)}


@endpoint(
    bp,
    "GET",
    "/couriers/<int:courier_id>/earnings",
    guard=D,
    response=schemas.EarningsOut,
    errors=(404,),
    tags=TAGS,
)
def courier_earnings(courier_id: int):
    """Delivered counts and amounts today, this week and all time (Asia/Yerevan)."""
    courier = service.own_courier(current_caller().company_id, courier_id)
    return service.earnings(courier.id)


@endpoint(
    bp,
    "POST",
    "/couriers/<int:courier_id>/shift/end",
    guard=D,
    response=schemas.CourierEnvelope,
    errors=(404, 409),
    tags=TAGS,
)
def end_courier_shift(courier_id: int):
    """End a courier's open shift, recording who ended it."""
    caller = current_caller()
    courier = service.own_courier(caller.company_id, courier_id)
    service.end_shift(courier, caller.user.id)
    return {"courier": courier_body(courier)}


# -- the pay rule (beyond the specification: docs/earnings.md) --------------------------------------

PAY_TAGS = ["Couriers"]


@endpoint(bp, "GET", "/company/pay-rule", guard=D, response=schemas.PayRuleEnvelope, tags=PAY_TAGS)
def get_pay_rule():
    """The company's pay rule for its couriers (null when none is set): what the earnings' payAmd
    is counted by. Beyond the specification (docs/earnings.md)."""
    return {"payRule": pay.rule_body(pay.rule_of(current_caller().company_id))}


@endpoint(
    bp,
    "PUT",
    "/company/pay-rule",
    guard=O,
    body=schemas.PayRuleIn,
    response=schemas.PayRuleEnvelope,
    tags=PAY_TAGS,
)
def put_pay_rule(body: schemas.PayRuleIn):
    """Set the pay rule (owner): per delivery, per kilometre or per hour, with a minimum per day
    worked; recorded in the audit log. Beyond the specification (docs/earnings.md)."""
    caller = current_caller()
    rule = pay.set_rule(caller.company_id, caller.user.id, body.basis, body.rateAmd, body.minimumAmd)
    return {"payRule": rule}


@endpoint(bp, "DELETE", "/company/pay-rule", guard=O, status=204, errors=(404,), tags=PAY_TAGS)
def delete_pay_rule():
    """Remove the pay rule (owner): the earnings show no pay. 404 when none is set."""
    pay.remove_rule(current_caller().company_id)
    return Response(status=204)
