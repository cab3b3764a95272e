"""Email delivery through a real SMTP server (and its failure), and public rate limits."""

from __future__ import annotations

import socketserver
import threading
from datetime import timedelta

import pytest

from appliance.common import clock
from appliance.dispatch.app import create_app
from appliance.dispatch.models import OutgoingMail
from tests.conftest import free_port
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.mail import mail_text, send_queued


class _SMTPHandler(socketserver.StreamRequestHandler):
    """A minimal real SMTP conversation (RFC 5321 subset) that keeps what it receives."""

    def handle(self) -> None:
        self.wfile.write(b"220 test ESMTP\r\n")
        data_mode = False
        lines: list[bytes] = []
        while True:
            line = self.rfile.readline()
            if not line:
                return
            if data_mode:
                if line in (b".\r\n", b".\n"):
                    self.server.messages.append(b"".join(lines))  # type: ignore[attr-defined]
                    lines = []
                    data_mode = False
                    self.wfile.write(b"250 queued\r\n")
                else:
                    lines.append(line)
                continue
            verb = line[:4].upper()
            if verb in (b"EHLO", b"HELO"):
                self.wfile.write(b"250 test\r\n")
            elif verb == b"DATA":
                data_mode = True
                self.wfile.write(b"354 go ahead\r\n")
            elif verb == b"QUIT":
                self.wfile.write(b"221 bye\r\n")
                return
            else:
                self.wfile.write(b"250 ok\r\n")


@pytest.fixture
def smtp_server():
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _SMTPHandler)
    server.daemon_threads = True
    server.messages = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_mail_goes_through_smtp_when_configured(settings, smtp_server) -> None:
    app = create_app(settings.replace(smtp_url=f"smtp://127.0.0.1:{smtp_server.server_address[1]}"))
    make_member(app, make_company(), "owner", email="ani@example.am")
    assert app.test_client().post("/auth/magic-link", json={"email": "ani@example.am"}).status_code == 202
    assert send_queued(app) == 1
    assert len(smtp_server.messages) == 1
    assert "/login?token=" in mail_text(smtp_server.messages[0])
    assert not (settings.data_dir / "outbox").exists()


def test_a_failing_smtp_server_neither_fails_the_request_nor_loses_the_message(settings, smtp_server) -> None:
    dead_port = free_port()
    app = create_app(settings.replace(smtp_url=f"smtp://127.0.0.1:{dead_port}"))
    make_member(app, make_company(), "owner", email="ani@example.am")
    assert app.test_client().post("/auth/magic-link", json={"email": "ani@example.am"}).status_code == 202
    assert send_queued(app) == 0  # the worker's pass meets the dead server
    queued = OutgoingMail.get()
    assert queued.status == "queued" and queued.attempts == 1 and queued.last_error
    # The server comes back (same queue, a working URL) and the worker's next pass delivers it.
    mailer = app.extensions["dispatch"].mailer
    mailer.smtp_url = f"smtp://127.0.0.1:{smtp_server.server_address[1]}"
    assert mailer.deliver_due() == 0  # not due yet: backoff
    clock.advance(timedelta(minutes=1))
    assert mailer.deliver_due() == 1
    assert OutgoingMail.get().status == "sent"
    assert len(smtp_server.messages) == 1


def test_a_burst_of_300_requests_from_one_address_meets_429(dispatch_client) -> None:
    statuses = [
        dispatch_client.post("/auth/magic-link", json={"email": "x@example.am"}).status_code
        for _ in range(300)
    ]
    assert statuses[0] == 202
    assert 429 in statuses
    limited = dispatch_client.post("/auth/magic-link", json={"email": "x@example.am"})
    assert limited.status_code == 429 and limited.json["status"] == 429


def test_rate_limits_can_be_switched_off(settings) -> None:
    client = create_app(settings.replace(rate_limits="off")).test_client()
    assert all(client.get(f"/auth/invite/{'x' * 30}").status_code == 404 for _ in range(300))


def test_with_rate_limits_off_the_public_views_are_not_wrapped_by_the_limiter(settings) -> None:
    """A disabled limiter still looked its limits up on each request of a view it wrapped."""

    def limited(app) -> set[str]:
        return {
            endpoint
            for endpoint, view in app.view_functions.items()
            if getattr(view, "__wrapper-limiter-instance", None) is not None
        }

    assert {"auth.login", "auth.magic_link", "tracking.track"} <= limited(create_app(settings))
    assert limited(create_app(settings.replace(rate_limits="off"))) == set()


def test_signed_in_endpoints_are_not_rate_limited(dispatch_app, dispatch_client) -> None:
    member = make_member(dispatch_app, make_company(), "owner")
    assert all(dispatch_client.get("/me", headers=member.headers).status_code == 200 for _ in range(200))


def test_a_redis_limit_store_that_cannot_be_reached_falls_back_to_counting_in_memory(settings) -> None:
    """Redis down (nothing listens on its port): public endpoints still answer, never a 500, and
    the limit still holds, counted by this process alone until Redis answers again."""
    unreachable = f"redis://127.0.0.1:{free_port()}/0"
    client = create_app(
        settings.replace(rate_limit_storage=unreachable, rate_limit_public="3 per minute")
    ).test_client()
    statuses = [client.post("/auth/magic-link", json={"email": "x@example.am"}).status_code for _ in range(5)]
    assert statuses == [202, 202, 202, 429, 429]


def test_a_rate_limit_store_other_than_memory_or_redis_stops_start_up(data_dir) -> None:
    from appliance.settings import SettingsError, load_settings

    for good in ("memory://", "redis://10.0.0.5:6379/0", "rediss://:secret@redis.example:6380"):
        assert load_settings({"data_dir": str(data_dir), "rate_limit_storage": good}, environ={})
    with pytest.raises(SettingsError, match="rate_limit_storage"):
        load_settings({"data_dir": str(data_dir), "rate_limit_storage": "memcached://10.0.0.5"}, environ={})
