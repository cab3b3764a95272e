"""A test e-HDM server, written from the contract of the `e-hdm` package (1.0.0, MIT: its client,
models and README follow the SRC's April 2026 integration manual): POST /api/v1.0/<call> with a
JSON body carrying ``crn``, answered ``{code, message, result, errorMessage}`` (code 0: done).

Real HTTPS with mutual TLS: its own CA (made here with ``cryptography``), a client certificate
per company (its CN the cash register's number: "the crn in every request must match the
certificate-bound CRN"), anything signed by another CA refused in the handshake. It keeps what it
printed: receipt ids and fiscal numbers increasing, every receipt's lines for printCopy,
getReturnedReceiptInfo and printReturnReceipt.

The package names no error codes; this server's (ERRORS) cover what the manual's notes and the
package's checks refuse: a crn not the certificate's, a register not activated, a department not
configured, an invalid request, an unknown receipt, a receipt returned already.

Faults, each for the next print only: ``hang`` (prints, then keeps the connection without an
answer until released), ``drop`` (prints, then closes the connection without an answer)."""

from __future__ import annotations

import datetime as dt
import http.server
import json
import ssl
import tempfile
import threading
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

ERRORS = {
    "crn": (1001, "The crn does not match the certificate"),
    "not_activated": (1002, "The cash register is not activated"),
    "department": (1003, "The department is not configured"),
    "invalid": (1004, "Invalid request"),
    "no_receipt": (1005, "Receipt not found"),
    "returned": (1006, "The receipt was returned already"),
    "unknown_call": (1007, "Unknown method"),
}
TAXPAYER_TIN = "02612345"


@dataclass
class Authority:
    """A certificate authority: its certificate and key, and certificates it issues."""

    name: str
    key: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))
    certificate: x509.Certificate | None = None

    def __post_init__(self) -> None:
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, self.name)])
        now = dt.datetime.now(dt.UTC)
        self.certificate = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(subject)
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(self.key, hashes.SHA256())
        )

    @property
    def pem(self) -> str:
        assert self.certificate is not None
        return self.certificate.public_bytes(serialization.Encoding.PEM).decode()

    def issue(self, common_name: str, *, server: bool = False) -> tuple[str, str]:
        """(certificate PEM, unencrypted key PEM)."""
        assert self.certificate is not None
        key = ec.generate_private_key(ec.SECP256R1())
        now = dt.datetime.now(dt.UTC)
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
            .issuer_name(self.certificate.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=30))
        )
        if server:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False
            )
        certificate = builder.sign(self.key, hashes.SHA256())
        key_pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ).decode()
        return certificate.public_bytes(serialization.Encoding.PEM).decode(), key_pem


@dataclass
class Register:
    activated: bool = False
    departments: dict[int, int] = field(default_factory=dict)


class EhdmServer:
    def __init__(self) -> None:
        self.ca = Authority("e-HDM test CA")
        self.lock = threading.Lock()
        self.registers: dict[str, Register] = {}
        self.receipts: dict[str, dict[str, Any]] = {}  # receiptId → what was printed
        self.calls: list[tuple[str, str]] = []  # (crn, call), in order
        self.next_id = 1000
        self.fault: str | None = None
        self.release = threading.Event()
        self._folder = tempfile.TemporaryDirectory(prefix="ehdm-server-")
        cert, key = self.ca.issue("localhost", server=True)
        folder = Path(self._folder.name)
        (folder / "server.crt").write_text(cert)
        (folder / "server.key").write_text(key)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(folder / "server.crt", folder / "server.key")
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(cadata=self.ca.pem)
        self.httpd = _Server(("127.0.0.1", 0), _Handler, context, self)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"https://localhost:{self.port}/taxsystem-rs-vcr"

    def client_certificate(self, crn: str) -> tuple[str, str]:
        """A company's certificate, bound to its cash register's number."""
        self.registers.setdefault(crn, Register())
        return self.ca.issue(crn)

    def printed(self, crn: str | None = None, kind: str | None = None) -> list[dict[str, Any]]:
        with self.lock:
            return [
                r
                for r in self.receipts.values()
                if (crn is None or r["crn"] == crn) and (kind is None or r["kind"] == kind)
            ]

    def start(self) -> EhdmServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self._folder.cleanup()

    # -- the calls ------------------------------------------------------------------------------

    def answer(
        self, call: str, crn_of_certificate: str, body: dict[str, Any]
    ) -> tuple[dict[str, Any], str | None]:
        """(the answer, the fault to act out after it was decided)."""
        with self.lock:
            self.calls.append((crn_of_certificate, call))
            if body.get("crn") != crn_of_certificate:
                return _error("crn"), None
            register = self.registers.setdefault(crn_of_certificate, Register())
            handler = getattr(self, f"_{call}", None)
            if handler is None:
                return _error("unknown_call"), None
            if call not in ("checkConnection", "activate") and not register.activated:
                return _error("not_activated"), None
            try:
                result = handler(register, crn_of_certificate, body)
            except _Refused as refused:
                return _error(refused.kind, refused.detail), None
            except (KeyError, TypeError, ValueError, ArithmeticError) as exc:
                return _error("invalid", f"{type(exc).__name__}: {exc}"), None
            fault = None
            if call in ("print", "printReturnReceipt") and self.fault:
                fault, self.fault = self.fault, None
            return {"code": 0, "message": "OK", "result": result}, fault

    def _checkConnection(self, register: Register, crn: str, body: dict) -> str:
        return "Connection is OK"

    def _activate(self, register: Register, crn: str, body: dict) -> str:
        register.activated = True
        return "Activated"

    def _configureDepartments(self, register: Register, crn: str, body: dict) -> str:
        for department in body["departments"]:
            if int(department["taxRegime"]) not in (1, 2, 3, 7):
                raise _Refused("invalid", "taxRegime")
            register.departments[int(department["dep"])] = int(department["taxRegime"])
        return "Configured"

    def _getGoodList(self, register: Register, crn: str, body: dict) -> dict:
        return {
            "goodLists": [
                {
                    "listname": "default",
                    "taxRegimeName": str(body["taxRegime"]),
                    "goods": [{"goodName": "Delivery", "goodCode": "DELIVERY", "price": "1000.00"}],
                }
            ]
        }

    def _print(self, register: Register, crn: str, body: dict) -> dict:
        if int(body["mode"]) != 2 or not body["items"]:
            raise _Refused("invalid", "mode 2 with items")
        total = Decimal(0)
        items = []
        for number, item in enumerate(body["items"], start=1):
            if int(item["dep"]) not in register.departments:
                raise _Refused("department", f"dep {item['dep']}")
            quantity, price = Decimal(item["quantity"]), Decimal(item["price"])
            if quantity <= 0 or price <= 0 or not item["adgCode"] or not item["goodName"] or not item["unit"]:
                raise _Refused("invalid", "item")
            total += quantity * price
            items.append(
                {**item, "receiptProductId": number, "taxRegime": register.departments[int(item["dep"])]}
            )
        paid = sum(
            Decimal(body[k]) for k in ("cashAmount", "cardAmount", "partialAmount", "prePaymentAmount")
        )
        if paid != total:
            raise _Refused("invalid", f"paid {paid} of {total}")
        partner = body.get("partnerTin")
        if partner is not None and not (len(partner) == 8 and partner.isdigit()):
            raise _Refused("invalid", "partnerTin")
        return self._issue(crn, "sale", total, body, items)

    def _issue(self, crn: str, kind: str, total: Decimal, body: dict, items: list) -> dict:
        self.next_id += 1
        receipt_id = str(self.next_id)
        fiscal = f"{self.next_id * 7:08d}"
        moment = int(dt.datetime.now(dt.UTC).timestamp() * 1000)
        summary = {
            "receiptId": receipt_id,
            "crn": crn,
            "sn": f"V{crn}",
            "tin": TAXPAYER_TIN,
            "taxpayer": "Arev LLC",
            "address": "Yerevan",
            "time": moment,
            "total": f"{total:.2f}",
            "change": "0.00",
            "emarkCount": 0,
            "emarkVerificationCode": "",
            "qr": f"https://e-hdm.test/receipt?crn={crn}&id={receipt_id}&fiscal={fiscal}&total={total:.2f}",
            "fiscal": fiscal,
        }
        self.receipts[receipt_id] = {
            "kind": kind,
            "crn": crn,
            "summary": summary,
            "request": body,
            "items": items,
            "returned": False,
        }
        return summary

    def _printCopy(self, register: Register, crn: str, body: dict) -> dict:
        kept = self.receipts.get(str(body["receiptId"]))
        if kept is None or kept["crn"] != crn:
            raise _Refused("no_receipt", str(body["receiptId"]))
        return kept["summary"]

    def _getReturnedReceiptInfo(self, register: Register, crn: str, body: dict) -> dict:
        # Another register of the same taxpayer may return a sale (sourceCrn: the one that printed it).
        kept = self.receipts.get(str(body["receiptId"]))
        if kept is None or kept["crn"] != body["sourceCrn"] or kept["kind"] != "sale":
            raise _Refused("no_receipt", str(body["receiptId"]))
        request = kept["request"]
        return {
            "cashierId": request["cashierId"],
            "cardAmount": request["cardAmount"],
            "cashAmount": request["cashAmount"],
            "partnerTin": request.get("partnerTin"),
            "partialAmount": request["partialAmount"],
            "prePayment": request["prePaymentAmount"],
            "saleType": 2,
            "receiptType": 0,
            "receiptSubType": 1,
            "totalAmount": kept["summary"]["total"],
            "time": kept["summary"]["time"],
            "items": [
                {
                    "receiptProductId": item["receiptProductId"],
                    "quantity": item["quantity"],
                    "additionalDiscount": None,
                    "additionalDiscountType": None,
                    "dep": item["dep"],
                    "discount": None,
                    "discountType": None,
                    "vat": "0.00",
                    "taxRegime": item["taxRegime"],
                    "goodCode": item["goodCode"],
                    "goodName": item["goodName"],
                    "adgCode": item["adgCode"],
                    "unit": item["unit"],
                    "price": item["price"],
                    "totalWithoutTaxes": f"{Decimal(item['quantity']) * Decimal(item['price']):.2f}",
                    "totalWithTaxes": f"{Decimal(item['quantity']) * Decimal(item['price']):.2f}",
                }
                for item in kept["items"]
            ],
            "emarks": [],
        }

    def _printReturnReceipt(self, register: Register, crn: str, body: dict) -> dict:
        kept = self.receipts.get(str(body["receiptId"]))
        if kept is None or kept["crn"] != body["sourceCrn"] or kept["kind"] != "sale":
            raise _Refused("no_receipt", str(body["receiptId"]))
        if kept["returned"]:
            raise _Refused("returned", str(body["receiptId"]))
        by_id = {item["receiptProductId"]: item for item in kept["items"]}
        total = Decimal(0)
        for line in body["returnItemList"]:
            item = by_id[int(line["receiptProductId"])]
            if Decimal(line["quantity"]) > Decimal(item["quantity"]):
                raise _Refused("invalid", "quantity")
            total += Decimal(line["quantity"]) * Decimal(item["price"])
        back = sum(
            Decimal(body[k])
            for k in ("cashAmountForReturn", "cardAmountForReturn", "prePaymentAmountForReturn")
        )
        if back != total:
            raise _Refused("invalid", f"returned {back} of {total}")
        kept["returned"] = True
        return self._issue(crn, "return", total, body, [])


class _Refused(Exception):
    def __init__(self, kind: str, detail: str = "") -> None:
        self.kind, self.detail = kind, detail


def _error(kind: str, detail: str = "") -> dict[str, Any]:
    code, message = ERRORS[kind]
    return {"code": code, "message": message, "result": None, "errorMessage": detail or None}


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address, handler, context: ssl.SSLContext, ehdm: EhdmServer) -> None:
        super().__init__(address, handler)
        self.context = context
        self.ehdm = ehdm

    def process_request_thread(self, request, client_address):  # type: ignore[no-untyped-def]
        # The handshake in the connection's own thread (a refused certificate fails it here).
        try:
            request = self.context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            self.shutdown_request(request)
            return
        super().process_request_thread(request, client_address)


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 30

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        ehdm: EhdmServer = self.server.ehdm  # type: ignore[attr-defined]
        peer = self.connection.getpeercert() or {}
        crn = next(
            (value for rdn in peer.get("subject", ()) for key, value in rdn if key == "commonName"), ""
        )
        call = self.path.rstrip("/").rsplit("/", 1)[-1]
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            body = {}
        answer, fault = ehdm.answer(call, crn, body if isinstance(body, dict) else {})
        if fault == "hang":
            ehdm.release.wait(60)
            self.close_connection = True
            return
        if fault == "drop":
            self.close_connection = True
            return
        data = json.dumps(answer, ensure_ascii=False).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
