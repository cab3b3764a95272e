"""The fiscal receipt's QR for the recipient's tracking page (issue 47): the QR text e-HDM answered
for the printed receipt, drawn as SVG (segno), so that the recipient can scan it with the State
Revenue Committee's app as from a paper receipt. Only for a printed (or since returned) receipt of
the link's order; everything else behaves as a missing page."""

from __future__ import annotations

import io

import segno

from appliance.common.problems import NotFound
from appliance.dispatch.models import Order
from appliance.dispatch.tracking.service import NOT_FOUND_DETAIL, find_link

SHOWN = ("printed", "returned")


def svg(token: str) -> bytes:
    link = find_link(token)  # NotFound for an unknown, expired or revoked link
    order = Order.get_or_none(Order.id == link.order_id)
    if order is None or order.fiscal_state not in SHOWN or not order.fiscal_qr:
        raise NotFound(NOT_FOUND_DETAIL)
    out = io.BytesIO()
    segno.make(order.fiscal_qr, error="m").save(out, kind="svg", scale=4, border=2, title="QR")
    return out.getvalue()
