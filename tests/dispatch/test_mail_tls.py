"""Mail through real providers' ways: STARTTLS and implicit TLS with authentication, against a real
SMTP server (aiosmtpd) on loopback with a test certificate authority."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from appliance.dispatch.app import create_app
from appliance.dispatch.models import OutgoingMail
from tests.conftest import free_port
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.mail import mail_text, send_queued
from tests.engine.tls_receiver import make_ca_and_server_cert


class Inbox:
    def __init__(self) -> None:
        self.messages: list[bytes] = []
        self.logins: list[str] = []
        self.tls: list[bool] = []

    async def handle_DATA(self, server, session, envelope) -> str:
        self.messages.append(envelope.original_content or envelope.content)
        self.tls.append(session.ssl is not None)
        return "250 OK"


def authenticator(inbox: Inbox):
    def check(server, session, envelope, mechanism, auth_data) -> AuthResult:
        ok = isinstance(auth_data, LoginPassword) and (auth_data.login, auth_data.password) == (
            b"mailer",
            b"s3cret",
        )
        if ok:
            inbox.logins.append(auth_data.login.decode())
        return AuthResult(success=ok)

    return check


@pytest.fixture
def certificates(tmp_path: Path) -> tuple[Path, ssl.SSLContext]:
    ca, cert, key = make_ca_and_server_cert(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return ca, context


def serve(
    inbox: Inbox, *, implicit: ssl.SSLContext | None = None, starttls: ssl.SSLContext | None = None
) -> Controller:
    controller = Controller(
        inbox,
        hostname="127.0.0.1",
        port=free_port(),
        ssl_context=implicit,
        tls_context=starttls,
        require_starttls=starttls is not None,
        authenticator=authenticator(inbox),
        # aiosmtpd counts only STARTTLS as TLS; an implicit-TLS listener is encrypted from the start.
        auth_require_tls=implicit is None,
        auth_exclude_mechanism=["CRAM-MD5"],
    )
    controller.start()
    return controller


def send_magic_link(settings, smtp_url: str, ca: Path | str) -> None:
    app = create_app(settings.replace(smtp_url=smtp_url, smtp_ca_file=str(ca)))
    make_member(app, make_company(), "owner", email="ani@example.am")
    assert app.test_client().post("/auth/magic-link", json={"email": "ani@example.am"}).status_code == 202
    send_queued(app)  # the mail worker's pass (a request only queues)


def test_mail_goes_out_through_starttls_with_a_login(settings, certificates) -> None:
    ca, context = certificates
    inbox = Inbox()
    controller = serve(inbox, starttls=context)
    try:
        send_magic_link(settings, f"smtp://mailer:s3cret@localhost:{controller.port}", ca)
    finally:
        controller.stop()
    assert inbox.logins == ["mailer"] and inbox.tls == [True]
    assert "/login?token=" in mail_text(inbox.messages[0])
    assert OutgoingMail.get().status == "sent"


def test_mail_goes_out_over_implicit_tls_with_a_login(settings, certificates) -> None:
    ca, context = certificates
    inbox = Inbox()
    controller = serve(inbox, implicit=context)
    try:
        send_magic_link(settings, f"smtps://mailer:s3cret@localhost:{controller.port}", ca)
    finally:
        controller.stop()
    assert inbox.logins == ["mailer"] and len(inbox.messages) == 1


def test_credentials_are_never_sent_to_a_server_without_starttls(settings, certificates) -> None:
    ca, _ = certificates
    inbox = Inbox()
    controller = serve(inbox)
    try:
        send_magic_link(settings, f"smtp://mailer:s3cret@localhost:{controller.port}", ca)
    finally:
        controller.stop()
    assert inbox.messages == [] and inbox.logins == []
    queued = OutgoingMail.get()
    assert queued.status == "queued" and "STARTTLS" in queued.last_error


def test_a_certificate_from_an_unknown_authority_is_refused(settings, certificates) -> None:
    _, context = certificates
    inbox = Inbox()
    controller = serve(inbox, implicit=context)
    try:
        send_magic_link(settings, f"smtps://mailer:s3cret@localhost:{controller.port}", "")
    finally:
        controller.stop()
    assert inbox.messages == []
    assert "CERTIFICATE_VERIFY_FAILED" in OutgoingMail.get().last_error
