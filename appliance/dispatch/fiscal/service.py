"""Fiscal-receipt rules: the company's e-HDM settings (the key sealed, never answered), the lines a
receipt lists, queueing a receipt in the delivery's transaction, a return, and a person's decision
on a receipt whose printing could not be known (docs/fiscal-receipts.md)."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from e_hdm import EHDMAPIError, ProductReceiptItem, ProductReceiptRequest

from appliance.common import clock
from appliance.common.addresses import HostRefused, checked_addresses
from appliance.common.db import write_transaction
from appliance.common.problems import BadGateway, Conflict, Invalid, NotFound
from appliance.dispatch.db import database
from appliance.dispatch.fiscal.client import Connection, NotSent, OutcomeUnknown, ehdm_client, tls_context
from appliance.dispatch.fiscal.secrets import seal, unseal
from appliance.dispatch.models import FiscalReceipt, FiscalSettings, Order
from appliance.dispatch.orders.state import audit

ATTENTION_MOVE = "fiscal_receipt"  # order.attention_move of a receipt waiting on a person
TIMEOUT_SECONDS = 20.0  # one e-HDM call; the answer to a print is awaited this long, then unknown
FEE_GOOD_CODE = "DELIVERY"
GOODS_GOOD_CODE = "GOODS"


# -- settings -------------------------------------------------------------------------------------


def settings_body(row: FiscalSettings | None) -> dict[str, Any] | None:
    if row is None:
        return None
    certificate = x509.load_pem_x509_certificate(row.certificate_pem.encode())
    return {
        "enabled": bool(row.enabled),
        "baseUrl": row.base_url,
        "crn": row.crn,
        "certificatePem": row.certificate_pem,  # public: the console saves it back unchanged
        "serverCaPem": row.server_ca_pem,
        "certificateSubject": certificate.subject.rfc4514_string(),
        "certificateNotAfter": clock.iso(certificate.not_valid_after_utc),
        "hasPrivateKey": True,
        "hasServerCa": bool(row.server_ca_pem),
        "cashierId": row.cashier_id,
        "department": row.department,
        "taxRegime": row.tax_regime,
        "adgCode": row.adg_code,
        "feeAdgCode": row.fee_adg_code,
        "unit": row.unit,
        "issueAsAgent": bool(row.issue_as_agent),
        "feeOnReceipt": bool(row.fee_on_receipt),
        "updatedAt": clock.iso(row.updated_at) if row.updated_at else None,
    }


def get_settings(company_id: int) -> dict[str, Any] | None:
    return settings_body(FiscalSettings.get_or_none(FiscalSettings.company == company_id))


def _checked_pems(fields: dict[str, Any], key_pem: str | None) -> None:
    """The certificate and key parse, belong together, and the CA parses (422 naming the field)."""
    try:
        certificate = x509.load_pem_x509_certificate(fields["certificatePem"].encode())
    except ValueError:
        raise Invalid(
            "The e-HDM certificate is not a PEM certificate.",
            errors=[{"field": "certificatePem", "message": "not a PEM certificate"}],
        ) from None
    if key_pem is not None:
        try:
            key = serialization.load_pem_private_key(key_pem.encode(), password=None)
        except (ValueError, TypeError):
            raise Invalid(
                "The e-HDM private key is not an unencrypted PEM private key.",
                errors=[{"field": "privateKeyPem", "message": "not an unencrypted PEM private key"}],
            ) from None
        mine = serialization.PublicFormat.SubjectPublicKeyInfo
        if key.public_key().public_bytes(
            serialization.Encoding.DER, mine
        ) != certificate.public_key().public_bytes(serialization.Encoding.DER, mine):
            raise Invalid(
                "The e-HDM private key does not belong to the certificate.",
                errors=[{"field": "privateKeyPem", "message": "not the certificate's key"}],
            )
    if fields.get("serverCaPem"):
        try:
            x509.load_pem_x509_certificates(fields["serverCaPem"].encode())
        except ValueError:
            raise Invalid(
                "The e-HDM server's CA is not a PEM certificate.",
                errors=[{"field": "serverCaPem", "message": "not a PEM certificate"}],
            ) from None


def put_settings(
    master_key: bytes, company_id: int, fields: dict[str, Any], *, allow_private: bool
) -> dict[str, Any]:
    """Replace the company's e-HDM settings; the private key may be left out to keep the one saved."""
    parts = urlsplit(fields["baseUrl"])
    if parts.scheme != "https" or not parts.hostname or parts.query or parts.fragment:
        raise Invalid(
            "The e-HDM address must be an https URL.",
            errors=[{"field": "baseUrl", "message": "an https URL without query"}],
        )
    try:
        checked_addresses(parts.hostname, parts.port or 443, allow_private)
    except HostRefused:
        raise Invalid(
            "The e-HDM address is refused: it must resolve to public addresses only.",
            errors=[{"field": "baseUrl", "message": "refused (unresolvable or non-public)"}],
        ) from None
    key_pem = fields.get("privateKeyPem")
    with write_transaction(database):
        row = FiscalSettings.get_or_none(FiscalSettings.company == company_id)
        if key_pem is None and row is None:
            raise Invalid(
                "The e-HDM private key is required.",
                errors=[{"field": "privateKeyPem", "message": "required"}],
            )
        if key_pem is None:
            key_pem = unseal(master_key, company_id, row.key_cipher)
        _checked_pems(fields, key_pem)
        new = row is None
        row = row or FiscalSettings(company=company_id)
        row.enabled = fields.get("enabled", True)
        row.base_url = fields["baseUrl"].rstrip("/")
        row.crn = fields["crn"]
        row.certificate_pem = fields["certificatePem"]
        row.key_cipher = seal(master_key, company_id, key_pem)
        row.server_ca_pem = fields.get("serverCaPem")
        row.cashier_id = fields["cashierId"]
        row.department = fields["department"]
        row.tax_regime = fields["taxRegime"]
        row.adg_code = fields["adgCode"]
        row.fee_adg_code = fields.get("feeAdgCode")
        row.unit = fields["unit"]
        row.issue_as_agent = fields.get("issueAsAgent", False)
        row.fee_on_receipt = fields.get("feeOnReceipt", True)
        row.updated_at = clock.now()  # type: ignore[assignment]
        row.save(force_insert=new)
    return settings_body(row)  # type: ignore[return-value]


def _own_settings(company_id: int) -> FiscalSettings:
    row = FiscalSettings.get_or_none(FiscalSettings.company == company_id)
    if row is None:
        raise NotFound("The company has no e-HDM settings.")
    return row


def connection_of(
    master_key: bytes, row: FiscalSettings, *, allow_private: bool, timeout: float = TIMEOUT_SECONDS
) -> Connection:
    context = tls_context(
        row.certificate_pem, unseal(master_key, row.company_id, row.key_cipher), row.server_ca_pem
    )
    return Connection(row.base_url, context, timeout=timeout, allow_private=allow_private)


def setup_call(master_key: bytes, company_id: int, what: str, *, allow_private: bool) -> dict[str, Any]:
    """checkConnection, or activate then configureDepartments (the company's department and tax
    regime); a refusal or no answer is 502 with e-HDM's words."""
    row = _own_settings(company_id)
    try:
        # A person waits on the answer: a shorter wait than the worker's.
        with connection_of(master_key, row, allow_private=allow_private, timeout=10.0) as connection:
            client = ehdm_client(row.crn, row.base_url, connection)
            if what == "check":
                message = client.check_connection()
            else:
                from e_hdm import DepartmentConfig, TaxRegime

                client.activate()
                message = client.configure_departments(
                    [DepartmentConfig(dep=row.department, tax_regime=TaxRegime(row.tax_regime))]
                )
    except (NotSent, OutcomeUnknown) as exc:
        raise BadGateway(
            "e-HDM could not be reached.", errors=[{"field": "e-HDM", "message": str(exc)[:300]}]
        ) from None
    except EHDMAPIError as exc:
        raise BadGateway(
            "e-HDM refused the call.", errors=[{"field": "e-HDM", "message": str(exc)[:300]}]
        ) from None
    return {"ok": True, "message": str(message or "")[:500]}


def good_lists(
    master_key: bytes, company_id: int, tax_regime: int, tin: str, *, allow_private: bool
) -> dict[str, Any]:
    """getGoodList as the API answers it (502 with e-HDM's words when refused or unreachable)."""
    from e_hdm import TaxRegime

    row = _own_settings(company_id)
    try:
        with connection_of(master_key, row, allow_private=allow_private, timeout=10.0) as connection:
            found = ehdm_client(row.crn, row.base_url, connection).get_good_list(TaxRegime(tax_regime), tin)
    except (NotSent, OutcomeUnknown) as exc:
        raise BadGateway(
            "e-HDM could not be reached.", errors=[{"field": "e-HDM", "message": str(exc)[:300]}]
        ) from None
    except EHDMAPIError as exc:
        raise BadGateway(
            "e-HDM refused the call.", errors=[{"field": "e-HDM", "message": str(exc)[:300]}]
        ) from None
    return {
        "goodLists": [
            {
                "listName": kept.list_name,
                "taxRegimeName": kept.tax_regime_name,
                "goods": [
                    {"goodName": g.good_name, "goodCode": g.good_code, "price": str(g.price)}
                    for g in kept.goods
                ],
            }
            for kept in found.good_lists
        ]
    }


# -- the receipt's lines --------------------------------------------------------------------------


class LinesMismatch(Exception):
    """The order's item lines do not add up to the cash collected: nothing is printed."""


def item_lines(order: Order) -> list[dict[str, Any]]:
    return json.loads(order.fiscal_items) if order.fiscal_items else []


def receipt_request(order: Order, settings: FiscalSettings, cash_amd: int) -> ProductReceiptRequest:
    """The print request: the order's items (or one goods line), and a delivery-fee line when the
    order has a fee and the company's receipts include it; they must add up to the cash."""
    fee = order.delivery_fee_amd if settings.fee_on_receipt and order.delivery_fee_amd else 0
    lines = []
    items = item_lines(order)
    for item in items:
        lines.append(
            ProductReceiptItem(
                adg_code=item.get("adgCode") or settings.adg_code,
                dep=settings.department,
                good_code=item.get("code") or item.get("adgCode") or settings.adg_code,
                good_name=item["name"],
                quantity=Decimal(item["quantity"]),
                unit=item.get("unit") or settings.unit,
                price=Decimal(item["priceAmd"]),
            )
        )
    goods_total = sum(Decimal(i["quantity"]) * i["priceAmd"] for i in items)
    if not items:
        goods_total = Decimal(cash_amd - fee)
        if goods_total > 0:
            lines.append(
                ProductReceiptItem(
                    adg_code=settings.adg_code,
                    dep=settings.department,
                    good_code=GOODS_GOOD_CODE,
                    good_name=f"Order {order.public_id}",
                    quantity=Decimal(1),
                    unit=settings.unit,
                    price=goods_total,
                )
            )
    if fee:
        lines.append(
            ProductReceiptItem(
                adg_code=settings.fee_adg_code or settings.adg_code,
                dep=settings.department,
                good_code=FEE_GOOD_CODE,
                good_name="Delivery",
                quantity=Decimal(1),
                unit=settings.unit,
                price=Decimal(fee),
            )
        )
    if not lines or goods_total + fee != cash_amd or goods_total < 0:
        raise LinesMismatch(
            f"the receipt's lines ({goods_total} goods + {fee} delivery) do not add up to "
            f"the cash collected ({cash_amd})"
        )
    partner = order.partner_tin if settings.issue_as_agent else None
    if settings.issue_as_agent and not partner:
        raise LinesMismatch("the company issues as the shop's agent and the order has no partnerTin")
    return ProductReceiptRequest(
        card_amount=Decimal(0),
        cash_amount=Decimal(cash_amd),
        partial_amount=Decimal(0),
        pre_payment_amount=Decimal(0),
        cashier_id=settings.cashier_id,
        items=lines,
        partner_tin=partner,
    )


# -- the outbox -----------------------------------------------------------------------------------


def queue_sale(order: Order, cash_amd: int | None) -> None:
    """Called in the delivery's transaction (courier's move, a dispatcher's on their behalf): a
    delivered cash order of a company with e-HDM on gets its receipt queued, once per order."""
    if not order.is_cod or not cash_amd:
        return
    if (
        not FiscalSettings.select()
        .where((FiscalSettings.company == order.company_id) & FiscalSettings.enabled)
        .exists()
    ):
        return
    if (
        FiscalReceipt.select()
        .where((FiscalReceipt.order == order.id) & (FiscalReceipt.kind == "sale"))
        .exists()
    ):
        return  # queued before (SQLite's insert-or-ignore answers the last row id: not a test)
    moment = clock.now()
    inserted = (
        FiscalReceipt.insert(
            company=order.company_id,
            order=order.id,
            kind="sale",
            status="queued",
            cash_amd=cash_amd,
            next_attempt_at=moment,
            created_at=moment,
        )
        .on_conflict_ignore()
        .execute()
    )
    if inserted:
        _set_state(order, "queued")


def _set_state(order: Order, state: str, **columns: Any) -> None:
    Order.update(fiscal_state=state, updated_at=clock.now(), **columns).where(Order.id == order.id).execute()
    order.fiscal_state = state
    for name, value in columns.items():
        setattr(order, name, value)


def _receipt(company_id: int, order_id: int, kind: str) -> FiscalReceipt:
    row = FiscalReceipt.get_or_none(
        (FiscalReceipt.company == company_id)
        & (FiscalReceipt.order == order_id)
        & (FiscalReceipt.kind == kind)
    )
    if row is None:
        raise NotFound("The order has no such fiscal receipt.")
    return row


def _own_order(company_id: int, order_id: int) -> Order:
    order = Order.get_or_none((Order.id == order_id) & (Order.company == company_id))
    if order is None:
        raise NotFound("No such order.")
    return order


def receipt_body(row: FiscalReceipt) -> dict[str, Any]:
    return {
        "kind": row.kind,
        "status": row.status,
        "cashAmd": row.cash_amd,
        "attempts": row.attempts,
        "lastError": row.last_error,
        "receiptId": row.receipt_id,
        "fiscalNumber": row.fiscal,
        "qr": row.qr,
        "createdAt": clock.iso(row.created_at),
        "printedAt": clock.iso(row.printed_at) if row.printed_at else None,
    }


def order_receipts(company_id: int, order_id: int) -> list[dict[str, Any]]:
    _own_order(company_id, order_id)
    rows = FiscalReceipt.select().where(
        (FiscalReceipt.company == company_id) & (FiscalReceipt.order == order_id)
    )
    return [receipt_body(r) for r in rows.order_by(FiscalReceipt.id)]


def request_return(company_id: int, order_id: int, actor_id: int) -> dict[str, Any]:
    """A delivered cash order came back and its cash was given back: its return receipt is queued
    (printed once, like the sale). 409 while the sale receipt is not printed."""
    with write_transaction(database):
        order = _own_order(company_id, order_id)
        sale = FiscalReceipt.get_or_none((FiscalReceipt.order == order.id) & (FiscalReceipt.kind == "sale"))
        if order.status != "delivered" or sale is None or sale.status != "printed":
            raise Conflict(
                "Only a delivered order whose receipt is printed can be returned.", code="receipt_not_printed"
            )
        if (
            FiscalReceipt.select()
            .where((FiscalReceipt.order == order.id) & (FiscalReceipt.kind == "return"))
            .exists()
        ):
            raise Conflict("The order's return receipt was asked for already.", code="return_requested")
        moment = clock.now()
        inserted = (
            FiscalReceipt.insert(
                company=company_id,
                order=order.id,
                kind="return",
                status="queued",
                cash_amd=sale.cash_amd,
                next_attempt_at=moment,
                created_at=moment,
            )
            .on_conflict_ignore()
            .execute()
        )
        if not inserted:
            raise Conflict("The order's return receipt was asked for already.", code="return_requested")
        _set_state(order, "returning")
        audit(order, "fiscal_return_requested", actor_id, cashAmd=sale.cash_amd)
        return receipt_body(_receipt(company_id, order_id, "return"))


def decide(
    master_key: bytes,
    company_id: int,
    order_id: int,
    actor_id: int,
    decision: dict[str, Any],
    *,
    allow_private: bool,
) -> dict[str, Any]:
    """A person's decision on a receipt whose printing is unknown (or that was refused): either it
    was printed (its receiptId, looked up with printCopy and recorded), or it was not (queued
    again: the only way a receipt is ever sent twice)."""
    kind = decision["kind"]
    row = _receipt(company_id, order_id, kind)
    if row.status not in ("unknown", "failed"):
        raise Conflict("The receipt waits on no decision.", code="no_decision_pending")
    if decision["outcome"] == "not_printed":
        with write_transaction(database):
            order = _own_order(company_id, order_id)
            FiscalReceipt.update(
                status="queued", attempts=0, next_attempt_at=clock.now(), lease_until=None, lease_holder=None
            ).where((FiscalReceipt.id == row.id) & FiscalReceipt.status.in_(("unknown", "failed"))).execute()
            clear_attention(order)
            _set_state(order, "queued" if kind == "sale" else "returning")
            audit(order, "fiscal_decision", actor_id, receiptKind=kind, outcome="not_printed")
        return receipt_body(FiscalReceipt.get_by_id(row.id))
    settings = _own_settings(company_id)
    try:
        with connection_of(master_key, settings, allow_private=allow_private) as connection:
            found = ehdm_client(settings.crn, settings.base_url, connection).print_copy(decision["receiptId"])
    except (NotSent, OutcomeUnknown) as exc:
        raise BadGateway(
            "e-HDM could not be reached.", errors=[{"field": "e-HDM", "message": str(exc)[:300]}]
        ) from None
    except EHDMAPIError as exc:
        raise Invalid(
            "e-HDM has no such receipt.", errors=[{"field": "receiptId", "message": str(exc)[:200]}]
        ) from None
    if found.total != Decimal(row.cash_amd):
        raise Invalid(
            "That receipt's total is not the order's cash.",
            errors=[{"field": "receiptId", "message": "another total"}],
        )
    with write_transaction(database):
        order = _own_order(company_id, order_id)
        record_printed(row.id, found.receipt_id, found.crn, found.fiscal, found.qr)
        audit(
            order,
            "fiscal_decision",
            actor_id,
            receiptKind=kind,
            outcome="printed",
            receiptId=found.receipt_id,
        )
    return receipt_body(FiscalReceipt.get_by_id(row.id))


# -- outcomes (the sender's and the decision's) ----------------------------------------------------


def clear_attention(order: Order) -> None:
    if order.attention_move == ATTENTION_MOVE:
        Order.update(
            attention_reason=None, attention_move=None, attention_held_amd=None, attention_at=None
        ).where(Order.id == order.id).execute()
        order.attention_reason = order.attention_move = None
        order.attention_at = None  # type: ignore[assignment]


def flag(order: Order, reason: str) -> None:
    """Needs attention: a person decides (the order's needsAttention, the console's list)."""
    Order.update(
        attention_reason=reason[:500], attention_move=ATTENTION_MOVE, attention_at=clock.now()
    ).where(Order.id == order.id).execute()


def record_printed(row_id: int, receipt_id: str, crn: str, fiscal: str | None, qr: str | None) -> None:
    """In the caller's transaction: the receipt printed, its number and QR on the order."""
    row = FiscalReceipt.get_by_id(row_id)
    FiscalReceipt.update(
        status="printed",
        receipt_id=receipt_id,
        crn=crn,
        fiscal=fiscal,
        qr=qr,
        printed_at=clock.now(),
        lease_until=None,
        lease_holder=None,
        last_error=None,
    ).where(FiscalReceipt.id == row_id).execute()
    order = Order.get_by_id(row.order_id)
    clear_attention(order)
    if row.kind == "sale":
        _set_state(
            order, "printed", fiscal_receipt_id=receipt_id, fiscal_number=fiscal or receipt_id, fiscal_qr=qr
        )
    else:
        _set_state(order, "returned")
    audit(order, "fiscal_printed", None, receiptKind=row.kind, receiptId=receipt_id, fiscal=fiscal)
