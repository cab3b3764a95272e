"""Recipient messages (issue 28) against a real SMPP server (the npm package `smpp`): the outbox
row written with the status change, the leased sender, UCS-2 Armenian, delivery receipts in the
order's history, retries while the provider is down, settings, languages and the late notice."""

from __future__ import annotations

import dataclasses
import json
import socket
import threading
from datetime import timedelta

import pytest

from appliance.common import clock
from appliance.dispatch.auth.sessions import token_hash
from appliance.dispatch.messages.outbox import queue
from appliance.dispatch.messages.secrets import unseal
from appliance.dispatch.messages.smpp import HOST_REFUSED, UNREACHABLE
from appliance.dispatch.models import (
    Company,
    CourierLocation,
    JobLease,
    Order,
    OrderEvent,
    OutgoingMail,
    RecipientLink,
    RecipientMessage,
    RecipientSettings,
    TrackingLink,
)
from appliance.settings import Settings
from tests.conftest import free_port
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import assigned_order, courier_status, create_order, ready_order
from tests.dispatch.smpp_fixture import PASSWORD, SYSTEM_ID, running_smpp


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The test SMPP server listens on loopback: this deployment allows private providers."""
    return dataclasses.replace(settings, smpp_allow_private=True)


@pytest.fixture
def owner(dispatch_app, company):
    return make_member(dispatch_app, company, "owner")


@pytest.fixture
def sender(dispatch_app):
    recipients = dispatch_app.extensions["dispatch"].recipients
    recipients.listen_seconds = 0.5
    return recipients


def set_up_sms(client, owner, port: int, **more) -> dict:
    body = {
        "smsEnabled": True,
        "smppHost": "127.0.0.1",
        "smppPort": port,
        "smppSystemId": SYSTEM_ID,
        "smppPassword": PASSWORD,
        "smppSourceAddr": "Arev",
        "events": ["assigned", "picked_up", "delivered", "failed"],
        **more,
    }
    response = client.patch("/company/messages", json=body, headers=owner.headers)
    assert response.status_code == 200, response.json
    return response.json["settings"]


def history(client, member, order_id: str) -> list[dict]:
    response = client.get(f"/orders/{order_id}/events", headers=member.headers)
    assert response.status_code == 200
    return response.json["events"]


def test_an_assigned_order_reaches_the_smpp_server_in_ucs2_armenian_with_its_link_and_its_receipt_in_history(
    dispatch_app, dispatch_client, owner, dispatcher, courier, sender
) -> None:
    port = free_port()
    with running_smpp(port) as smsc:
        set_up_sms(dispatch_client, owner, port)
        order = assigned_order(dispatch_client, dispatcher, courier)
        queued = RecipientMessage.get()
        assert (queued.event, queued.channel, queued.status, queued.language) == (
            "assigned",
            "sms",
            "queued",
            "hy",
        )

        # The session listens until the receipt of what it sent is in (100 ms after the
        # submission), not for its whole window: the provider is not held for two minutes.
        sender.listen_seconds = 120

        def send() -> None:
            with dispatch_app.app_context():
                sender.run_pass()

        passing = threading.Thread(target=send)
        passing.start()
        passing.join(60)
        assert not passing.is_alive(), "the session listened on after its receipt came"
        submit = smsc.wait_for("submit_sm")
        assert submit["data_coding"] == 8  # UCS-2
        assert submit["destination_addr"] == "37491123456"
        assert submit["source_addr"] == "Arev" and submit["source_addr_ton"] == 5  # alphanumeric
        assert submit["registered_delivery"] == 1
        parts = [submit]
        while len(parts) < 2 and submit["udh"]:  # a concatenated message: every part
            parts.append(smsc.wait_for("submit_sm"))
        text = "".join(p["text"] for p in parts)
        assert "Ձեր պատվերը" in text and order["publicId"] in text
        assert bytes.fromhex(parts[0]["ucs2_hex"]).decode("utf-16-be") == parts[0]["text"]
        link = text[text.index("http") :].split()[0]
        token = link.rsplit("/t/", 1)[1]
        assert dispatch_client.get(f"/track/{token}").status_code == 200  # the link works

        smsc.wait_for("deliver_sm_resp")  # the receipt was read in the same session
        sent = RecipientMessage.get()
        assert sent.status == "delivered" and sent.segments == len(parts) and sent.receipt_at
        assert token not in sent.body and "{token}" in sent.body  # no live token at rest

    kinds = [e["kind"] for e in history(dispatch_client, dispatcher, order["id"])]
    assert kinds.index("message_sent") < kinds.index("message_delivered")
    listed = dispatch_client.get(f"/orders/{order['id']}/messages", headers=dispatcher.headers).json
    assert [(m["event"], m["status"]) for m in listed["messages"]] == [("assigned", "delivered")]


def test_with_the_smpp_server_down_status_changes_go_through_and_the_message_is_retried_later(
    dispatch_app, dispatch_client, owner, dispatcher, courier, sender
) -> None:
    port = free_port()  # nothing listens here yet
    set_up_sms(dispatch_client, owner, port)
    order = assigned_order(dispatch_client, dispatcher, courier)
    assert courier_status(dispatch_client, courier, order["id"], status="picked_up").status_code == 200
    # The requests never touched the provider: their messages wait, untried, for the worker.
    assert [(r.status, r.attempts) for r in RecipientMessage.select()] == [("queued", 0), ("queued", 0)]
    with dispatch_app.app_context():
        sender.run_pass()
    rows = list(RecipientMessage.select().order_by(RecipientMessage.id))
    assert [(r.event, r.status, r.attempts) for r in rows] == [
        ("assigned", "queued", 1),
        ("picked_up", "queued", 1),
    ]
    assert all(r.last_error and r.next_attempt_at > clock.now() for r in rows)

    with running_smpp(port) as smsc:
        with dispatch_app.app_context():
            assert sender.run_pass() == 0  # backing off: nothing is due yet
            clock.advance(timedelta(minutes=1))
            sender.run_pass()
        assert smsc.wait_for("submit_sm") and smsc.wait_for("submit_sm")
    assert {r.status for r in RecipientMessage.select()} <= {"sent", "delivered"}


def test_a_receipt_the_provider_kept_is_read_on_a_later_bind(
    dispatch_app, dispatch_client, owner, dispatcher, courier, sender
) -> None:
    port = free_port()
    with running_smpp(port, receipt_delay_ms=1500) as smsc:
        set_up_sms(dispatch_client, owner, port)
        assigned_order(dispatch_client, dispatcher, courier)
        sender.listen_seconds = 0.2
        with dispatch_app.app_context():
            sender.run_pass()
        smsc.wait_for("submit_sm")
        assert RecipientMessage.get().status == "sent"
        sender.receipt_poll_seconds = 0
        sender.listen_seconds = 5.0  # the receipt is due 1.5 s after the submission
        with dispatch_app.app_context():
            assert sender.run_pass() == 1
        assert RecipientMessage.get().status == "delivered"


def test_the_recipient_language_picks_the_text_and_the_company_default_applies_when_absent(
    dispatch_app, dispatch_client, owner, dispatcher, courier
) -> None:
    set_up_sms(dispatch_client, owner, free_port(), defaultLanguage="en")
    ru = assigned_order(dispatch_client, dispatcher, courier, recipientLanguage="ru")
    default = assigned_order(dispatch_client, dispatcher, courier)
    assert ru["recipientLanguage"] == "ru" and default["recipientLanguage"] is None
    languages = {r.order_id: r.language for r in RecipientMessage.select()}
    assert languages == {int(ru["id"]): "ru", int(default["id"]): "en"}


def test_only_the_chosen_events_send_and_each_once_per_attempt(
    dispatch_app, dispatch_client, owner, dispatcher, courier, company
) -> None:
    set_up_sms(dispatch_client, owner, free_port(), events=["assigned", "delivered"])
    order = assigned_order(dispatch_client, dispatcher, courier)
    # Reassigning an assigned order to another courier is no new status: nothing more is queued.
    other = make_member(dispatch_app, company, "courier")
    again = dispatch_client.post(
        f"/orders/{order['id']}/assign", json={"courierId": other.courier.id}, headers=dispatcher.headers
    )
    assert again.status_code == 201, again.json
    assert courier_status(dispatch_client, other, order["id"], status="picked_up").status_code == 200
    assert courier_status(dispatch_client, other, order["id"], status="delivered").status_code == 200
    assert [r.event for r in RecipientMessage.select().order_by(RecipientMessage.id)] == [
        "assigned",
        "delivered",
    ]
    # The same event of the same attempt is queued once, whoever asks again (a unique key).
    with dispatch_app.app_context():
        row = Order.get_by_id(int(order["id"]))
        assert queue(row, "delivered", RecipientSettings.get()) == []
    assert RecipientMessage.select().count() == 2


def test_the_smpp_password_is_kept_encrypted_and_never_shown(
    dispatch_app, dispatch_client, owner, company
) -> None:
    settings = set_up_sms(dispatch_client, owner, 2775)
    assert settings["hasSmppPassword"] is True and "smppPassword" not in settings
    row = RecipientSettings.get()
    assert PASSWORD.encode() not in bytes(row.smpp_password_cipher)
    assert (
        unseal(dispatch_app.extensions["dispatch"].master_key, company.id, row.smpp_password_cipher)
        == PASSWORD
    )
    shown = dispatch_client.get("/company/messages", headers=owner.headers).json["settings"]
    assert PASSWORD not in str(shown)


def test_sms_without_a_whole_provider_is_refused_with_the_missing_fields(dispatch_client, owner) -> None:
    response = dispatch_client.patch(
        "/company/messages", json={"smsEnabled": True, "smppHost": "smpp.example.am"}, headers=owner.headers
    )
    assert response.status_code == 422
    assert {e["field"] for e in response.json["errors"]} == {
        "smppPort",
        "smppSystemId",
        "smppPassword",
        "smppSourceAddr",
    }
    assert RecipientSettings.select().count() == 0


def test_a_dispatcher_cannot_change_the_message_settings(dispatch_client, dispatcher) -> None:
    response = dispatch_client.patch(
        "/company/messages", json={"emailEnabled": True}, headers=dispatcher.headers
    )
    assert response.status_code == 403


def test_the_late_notice_is_previewed_with_its_segment_count_then_sent(
    dispatch_app, dispatch_client, owner, dispatcher, courier, sender
) -> None:
    port = free_port()
    set_up_sms(dispatch_client, owner, port, events=[])  # the button sends whatever the events
    order = assigned_order(dispatch_client, dispatcher, courier)
    courier_status(dispatch_client, courier, order["id"], status="picked_up")
    preview = dispatch_client.post(
        f"/orders/{order['id']}/messages/late/preview", json={"delayMinutes": 20}, headers=dispatcher.headers
    )
    assert preview.status_code == 200
    shown = preview.json
    assert shown["encoding"] == "ucs2" and shown["segments"] == 2 and shown["channels"] == ["sms"]
    assert "20" in shown["text"] and shown["language"] == "hy"

    sent = dispatch_client.post(
        f"/orders/{order['id']}/messages/late", json={"delayMinutes": 20}, headers=dispatcher.headers
    )
    assert sent.status_code == 201
    assert [(m["event"], m["status"]) for m in sent.json["messages"]] == [("late", "queued")]
    with running_smpp(port) as smsc:
        with dispatch_app.app_context():
            sender.run_pass()
        parts = [smsc.wait_for("submit_sm") for _ in range(shown["segments"])]
    text = "".join(p["text"] for p in parts)
    assert "20 րոպե" in text and "/t/" in text
    row = RecipientMessage.get(RecipientMessage.event == "late")
    assert row.segments == shown["segments"]


def test_the_late_notice_needs_a_channel_and_an_order_out_for_delivery(
    dispatch_client, owner, dispatcher
) -> None:
    order = ready_order(dispatch_client, dispatcher)
    response = dispatch_client.post(
        f"/orders/{order['id']}/messages/late", json={}, headers=dispatcher.headers
    )
    assert response.status_code == 409
    preview = dispatch_client.post(f"/orders/{order['id']}/messages/late/preview", headers=dispatcher.headers)
    assert preview.status_code == 200 and preview.json["channels"] == []
    assert (
        dispatch_client.post("/orders/999999/messages/late", json={}, headers=dispatcher.headers).status_code
        == 404
    )


def test_an_order_with_an_email_address_is_mailed_through_the_outbox(
    dispatch_app, dispatch_client, owner, dispatcher, courier, sender
) -> None:
    response = dispatch_client.patch(
        "/company/messages", json={"emailEnabled": True, "events": ["assigned"]}, headers=owner.headers
    )
    assert response.status_code == 200
    order = assigned_order(
        dispatch_client, dispatcher, courier, recipientEmail="gayane@example.am", recipientLanguage="en"
    )
    with dispatch_app.app_context():
        sender.run_pass()
    mail = OutgoingMail.get(OutgoingMail.to_address == "gayane@example.am")
    assert "Your order" in mail.subject and "/t/" in mail.body
    assert RecipientMessage.get().status == "sent"
    assert "message_sent" in [e["kind"] for e in history(dispatch_client, dispatcher, order["id"])]


def test_a_message_link_is_reused_and_not_revoked_by_the_next_message(
    dispatch_app, dispatch_client, owner, dispatcher, courier, sender
) -> None:
    response = dispatch_client.patch(
        "/company/messages",
        json={"emailEnabled": True, "events": ["assigned", "picked_up"]},
        headers=owner.headers,
    )
    assert response.status_code == 200
    order = assigned_order(dispatch_client, dispatcher, courier, recipientEmail="gayane@example.am")
    with dispatch_app.app_context():
        sender.run_pass()
    courier_status(dispatch_client, courier, order["id"], status="picked_up")
    with dispatch_app.app_context():
        sender.run_pass()
    assert TrackingLink.select().count() == 1
    bodies = [m.body for m in OutgoingMail.select().order_by(OutgoingMail.id)]
    links = {b[b.index("http") :].split()[0] for b in bodies}
    assert len(links) == 1


def test_creating_an_order_with_a_bad_language_or_email_is_a_400(dispatch_client, dispatcher) -> None:
    from tests.dispatch.orders_helpers import ORDER

    for extra in ({"recipientLanguage": "de"}, {"recipientEmail": "not-an-address"}):
        response = dispatch_client.post("/orders", json=ORDER | extra, headers=dispatcher.headers)
        assert response.status_code == 400, extra
    assert OrderEvent.select().count() == 0
    assert create_order(dispatch_client, dispatcher, recipientLanguage="en")["recipientLanguage"] == "en"


def test_the_recipient_hears_arriving_from_the_estimate_and_late_when_it_passes_the_window(
    dispatch_app, dispatch_client, owner, dispatcher, courier, sender
) -> None:
    set_up_sms(dispatch_client, owner, free_port(), events=["arriving", "late"], arrivingMinutes=10)
    window_end = clock.iso(clock.now() - timedelta(minutes=30))
    near = assigned_order(dispatch_client, dispatcher, courier)
    overdue = assigned_order(
        dispatch_client,
        dispatcher,
        courier,
        deliveryWindowStart=clock.iso(clock.now() - timedelta(hours=1)),
        deliveryWindowEnd=window_end,
    )
    assert courier_status(dispatch_client, courier, near["id"], status="picked_up").status_code == 200
    CourierLocation.create(
        courier=courier.courier.id,
        lat=near["pin"]["lat"],
        lon=near["pin"]["lon"] + 0.001,
        captured_at=clock.now(),
        received_at=clock.now(),
    )
    sender.estimate_every_seconds = 0
    with dispatch_app.app_context():
        sender.run_pass()
        sender.run_pass()  # a second look queues nothing twice
    rows = {(r.order_id, r.event): json.loads(r.data) for r in RecipientMessage.select()}
    assert set(rows) == {(int(near["id"]), "arriving"), (int(overdue["id"]), "late")}
    assert rows[(int(near["id"]), "arriving")]["minutes"] <= 10
    assert rows[(int(overdue["id"]), "late")]["minutes"] >= 30


def test_the_throughput_limit_spaces_submissions_to_the_providers_rate(monkeypatch) -> None:
    from appliance.dispatch.messages import smpp

    now = [100.0]
    slept: list[float] = []
    monkeypatch.setattr(smpp.time, "monotonic", lambda: now[0])

    def sleep(seconds: float) -> None:
        slept.append(round(seconds, 6))
        now[0] += seconds

    monkeypatch.setattr(smpp.time, "sleep", sleep)
    provider = smpp.Provider("127.0.0.1", 1, "arev", "pw", "Arev", False, per_second=4)
    session = smpp.SmppSession(provider, lambda *_: None)
    for _ in range(3):
        session._pace()
    assert slept == [0.25, 0.25]  # the first goes at once, then one every 1/4 s


def test_another_process_sending_for_the_provider_leaves_the_messages_queued(
    dispatch_app, dispatch_client, owner, dispatcher, courier, company, sender
) -> None:
    set_up_sms(dispatch_client, owner, free_port())
    assigned_order(dispatch_client, dispatcher, courier)
    JobLease.create(
        name=f"smpp:{company.id}", holder="other-host:1:1", lease_until=clock.now() + timedelta(minutes=1)
    )
    with dispatch_app.app_context():
        assert sender.run_pass() == 0
    row = RecipientMessage.get()
    assert row.status == "queued" and row.attempts == 0 and row.next_attempt_at > clock.now()


def test_a_number_the_provider_refuses_waits_alone_while_the_others_go_out(
    dispatch_app, dispatch_client, owner, dispatcher, courier, sender
) -> None:
    port = free_port()
    with running_smpp(port) as smsc:
        set_up_sms(dispatch_client, owner, port, events=["assigned"], defaultLanguage="en")
        refused = assigned_order(dispatch_client, dispatcher, courier, recipientPhone="+37477000000")
        fine = assigned_order(dispatch_client, dispatcher, courier)
        with dispatch_app.app_context():
            sender.run_pass()
        assert smsc.wait_for("submit_sm_refused")["destination_addr"] == "37477000000"
        assert smsc.wait_for("submit_sm")["destination_addr"] == "37491123456"
    rows = {r.order_id: r for r in RecipientMessage.select()}
    waiting = rows[int(refused["id"])]
    assert (waiting.status, waiting.attempts) == ("queued", 1) and "refused" in waiting.last_error
    assert rows[int(fine["id"])].status in {"sent", "delivered"}


def test_the_queue_of_messages_waiting_for_the_provider_shows_in_metrics(
    dispatch_client, owner, dispatcher, courier
) -> None:
    from prometheus_client.parser import text_string_to_metric_families

    set_up_sms(dispatch_client, owner, free_port())
    assigned_order(dispatch_client, dispatcher, courier)
    text = dispatch_client.get("/metrics").get_data(as_text=True)
    samples = {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }
    assert samples[("appliance_queue_depth", frozenset({"queue": "recipient_messages"}.items()))] == 1


def test_the_openapi_document_describes_the_messages_and_the_recipients_language(dispatch_client) -> None:
    document = dispatch_client.get("/openapi.json").json
    for path in (
        "/company/messages",
        "/orders/{order_id}/messages",
        "/orders/{order_id}/messages/late",
        "/orders/{order_id}/messages/late/preview",
    ):
        assert path in document["paths"], path
    create = document["components"]["schemas"]["OrderCreate"]["properties"]
    assert "recipientLanguage" in create and "recipientEmail" in create
    assert "hy" in json.dumps(create["recipientLanguage"])
    patch = document["components"]["schemas"]["MessageSettingsPatch"]["properties"]
    assert "smppPassword" in patch
    out = document["components"]["schemas"]["MessageSettingsOut"]["properties"]
    assert "smppPassword" not in out and "hasSmppPassword" in out


def test_a_provider_offering_tls_is_reached_over_tls_and_an_untrusted_certificate_sends_nothing(
    dispatch_app, dispatch_client, owner, dispatcher, courier, sender, tmp_path, caplog
) -> None:
    from tests.engine.tls_receiver import make_ca_and_server_cert

    ca, cert, key = make_ca_and_server_cert(tmp_path)
    port = free_port()
    with running_smpp(port, tls=(cert, key)) as smsc:
        set_up_sms(dispatch_client, owner, port, smppTls=True, events=["assigned"])
        assigned_order(dispatch_client, dispatcher, courier)
        # Without the test authority the certificate is not trusted: nothing is sent, it waits.
        with dispatch_app.app_context():
            sender.run_pass()
        row = RecipientMessage.get()
        assert (row.status, row.attempts) == ("queued", 1) and row.last_error == UNREACHABLE
        assert "CERTIFICATE_VERIFY_FAILED" in caplog.text  # the cause is the operator's, in the log
        sender.ca_file = str(ca)
        clock.advance(timedelta(minutes=1))
        with dispatch_app.app_context():
            sender.run_pass()
        assert smsc.wait_for("submit_sm")["data_coding"] == 8
    assert RecipientMessage.get().status in {"sent", "delivered"}


def test_news_the_order_overtook_while_the_provider_was_down_is_skipped_not_sent(
    dispatch_app, dispatch_client, owner, dispatcher, courier, sender
) -> None:
    port = free_port()
    set_up_sms(
        dispatch_client, owner, port, events=["assigned", "picked_up", "delivered"], defaultLanguage="en"
    )
    order = assigned_order(dispatch_client, dispatcher, courier)
    with dispatch_app.app_context():
        sender.run_pass()  # the provider is down: "assigned" waits
    courier_status(dispatch_client, courier, order["id"], status="picked_up")
    courier_status(dispatch_client, courier, order["id"], status="delivered")
    clock.advance(timedelta(minutes=1))
    sender.listen_seconds = 3.0  # the receipt is read in this session: time for a busy machine
    with running_smpp(port) as smsc:
        with dispatch_app.app_context():
            sender.run_pass()
        assert "was delivered" in smsc.wait_for("submit_sm")["text"]
        smsc.wait_for("deliver_sm_resp")
        assert [e for e in smsc.drain() if e["event"] == "submit_sm"] == []  # nothing else went out
    statuses = {r.event: r.status for r in RecipientMessage.select()}
    assert statuses == {"assigned": "skipped", "picked_up": "skipped", "delivered": "delivered"}
    assert "message_skipped" in [e["kind"] for e in history(dispatch_client, dispatcher, order["id"])]


def test_an_imported_day_carries_each_recipients_language_and_email(dispatch_client, dispatcher) -> None:
    from tests.dispatch.import_helpers import csv_bytes, post_csv, row

    rows = [
        row(1, Լեզու="Русский", email="one@example.am"),
        row(2, Լեզու="en"),
        row(3),
        row(4, Լեզու="de"),
    ]
    answer = post_csv(dispatch_client, dispatcher, csv_bytes(rows))
    assert answer.status_code in (200, 201), answer.json
    stored = {o.external_ref: (o.recipient_language, o.recipient_email) for o in Order.select()}
    assert stored == {"SHOP-1": ("ru", "one@example.am"), "SHOP-2": ("en", None), "SHOP-3": (None, None)}
    assert [r["row"] for r in answer.json["refused"]] == [5]


def test_a_failing_estimate_does_not_hold_up_the_messages_already_queued(
    dispatch_app, dispatch_client, owner, dispatcher, courier, sender, monkeypatch
) -> None:
    port = free_port()
    set_up_sms(dispatch_client, owner, port, events=["assigned", "arriving"])
    assigned_order(dispatch_client, dispatcher, courier)

    def broken(*_args, **_kwargs):
        raise RuntimeError("the road engine is gone")

    monkeypatch.setattr("appliance.dispatch.messages.sender.courier_eta", broken)
    sender.estimate_every_seconds = 0
    with running_smpp(port) as smsc:
        with dispatch_app.app_context():
            sender.run_pass()
        assert smsc.wait_for("submit_sm")
    assert RecipientMessage.get().status in {"sent", "delivered"}


# -- the provider's host is a server-side request (issue 41 item 5) ----------------------------------


def whole_provider(host: str, port: int = 2775) -> dict:
    return {
        "smsEnabled": True,
        "smppHost": host,
        "smppPort": port,
        "smppSystemId": SYSTEM_ID,
        "smppPassword": PASSWORD,
        "smppSourceAddr": "Arev",
    }


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "localhost",  # a name resolving to loopback
        "::1",
        "::ffff:127.0.0.1",  # IPv4-mapped
        "0:0:0:0:0:ffff:7f00:1",
        "10.0.0.5",
        "169.254.169.254",  # cloud metadata
        "0.0.0.0",
        "no-such-host.invalid",
    ],
)
def test_an_smpp_host_that_is_not_public_is_refused_when_saved(settings: Settings, host: str) -> None:
    from appliance.dispatch.app import create_app

    app = create_app(dataclasses.replace(settings, smpp_allow_private=False))  # the default
    client, owner = app.test_client(), make_member(app, make_company("Arev"), "owner")
    response = client.patch("/company/messages", json=whole_provider(host), headers=owner.headers)
    assert response.status_code == 422, (host, response.json)
    assert response.mimetype == "application/problem+json"
    # The owner reads Armenian (an account's default language): the finding is worded in it.
    assert response.json["errors"] == [
        {"field": "smppHost", "message": "մերժված է (չի գտնվում կամ հանրային չէ)"}
    ]
    assert "127.0.0.1" not in response.text.replace(host, "")  # nothing about where it points
    assert RecipientSettings.select().count() == 0


def test_a_saved_smpp_host_that_is_now_private_is_not_connected_to_at_send_time(
    dispatch_app, dispatch_client, owner, dispatcher, courier, sender
) -> None:
    """Accepted while the deployment allowed private providers (as a name that resolved publicly
    when saved): the check at connection time refuses it, and no connection is made."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.setblocking(False)
        port = listener.getsockname()[1]
        set_up_sms(dispatch_client, owner, port, smppHost="localhost", events=["assigned"])
        assigned_order(dispatch_client, dispatcher, courier)
        sender.app_settings = dataclasses.replace(sender.app_settings, smpp_allow_private=False)
        with dispatch_app.app_context():
            sender.run_pass()
        with pytest.raises(BlockingIOError):
            listener.accept()  # no connection ever reached the address
    row = RecipientMessage.get()
    assert (row.status, row.attempts, row.last_error) == ("queued", 1, HOST_REFUSED)


def test_the_last_error_is_the_same_for_a_closed_port_a_silent_one_and_one_speaking_another_protocol(
    dispatch_app, dispatch_client, owner, dispatcher, courier, sender
) -> None:
    """lastError must not map the ports of the provider's host (open, closed, filtered)."""
    sender.timeout = 1.0  # how long a silent listener is waited for
    closed = free_port()
    with (
        socket.create_server(("127.0.0.1", 0)) as silent,  # accepts (the kernel does), never answers
        socket.create_server(("127.0.0.1", 0)) as banner,
    ):
        speaking = threading.Thread(target=lambda: banner.accept()[0].sendall(b"SSH-2.0-OpenSSH_9.6\r\n"))
        speaking.start()
        errors = []
        for port in (closed, silent.getsockname()[1], banner.getsockname()[1]):
            set_up_sms(dispatch_client, owner, port, events=["assigned"])
            assigned_order(dispatch_client, dispatcher, courier)
            with dispatch_app.app_context():
                sender.run_pass()
            row = RecipientMessage.select().order_by(RecipientMessage.id.desc()).get()
            assert (row.status, row.attempts) == ("queued", 1)
            errors.append(row.last_error)
        speaking.join()
    assert errors == [UNREACHABLE] * 3


def test_a_provider_name_that_resolves_to_loopback_after_it_was_saved_is_not_connected_to(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DNS rebinding: the name resolved to a public address when saved (no connection is made
    then) and to loopback when the message goes: the connection-time check refuses it."""
    from appliance.dispatch.app import create_app

    app = create_app(dataclasses.replace(settings, smpp_allow_private=False))  # the default
    client, company = app.test_client(), make_company("Arev")
    owner, dispatcher = make_member(app, company, "owner"), make_member(app, company, "dispatcher")
    courier = make_member(app, company, "courier")
    answers = {"smpp.rebinding.test": "93.184.216.34"}  # a public address
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):  # the resolver, for this one name
        if host in answers:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (answers[host], port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.setblocking(False)
        set_up_sms(
            client, owner, listener.getsockname()[1], smppHost="smpp.rebinding.test", events=["assigned"]
        )
        assigned_order(client, dispatcher, courier)
        answers["smpp.rebinding.test"] = "127.0.0.1"  # the name now points inside
        sender = app.extensions["dispatch"].recipients
        with app.app_context():
            sender.run_pass()
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing reached the loopback listener
    row = RecipientMessage.get()
    assert (row.status, row.attempts, row.last_error) == ("queued", 1, HOST_REFUSED)


def test_the_link_a_message_carried_is_the_link_in_force_the_console_shows(
    dispatch_app, dispatch_client, owner, dispatcher, courier, sender
) -> None:
    # Issued through tracking/links.issue like the dispatcher's: kept sealed, so the console can
    # show it (it was issued without, and the console said a link existed but could not show it).
    response = dispatch_client.patch(
        "/company/messages", json={"emailEnabled": True, "events": ["assigned"]}, headers=owner.headers
    )
    assert response.status_code == 200
    order = assigned_order(dispatch_client, dispatcher, courier, recipientEmail="gayane@example.am")
    with dispatch_app.app_context():
        sender.run_pass()
    sent = TrackingLink.get_by_id(RecipientLink.get().link_id)  # the link the mail carried
    shown = dispatch_client.get(f"/orders/{order['id']}/tracking", headers=dispatcher.headers).json["link"]
    assert shown["path"] is not None
    assert token_hash(shown["path"].removeprefix("/t/")) == sent.token_hash


def test_a_provider_out_of_reach_shows_on_the_order_with_its_error_never_as_sent(
    dispatch_app, dispatch_client, owner, dispatcher, courier, sender
) -> None:
    """Issue 46: the message sat queued with an error while nothing on the order said so."""
    port = free_port()  # nothing listens here
    set_up_sms(dispatch_client, owner, port)
    order = assigned_order(dispatch_client, dispatcher, courier)
    with dispatch_app.app_context():
        sender.run_pass()
    messages = dispatch_client.get(f"/orders/{order['id']}/messages", headers=dispatcher.headers).json
    (message,) = messages["messages"]
    assert (message["status"], message["failing"]) == ("queued", True)
    assert message["lastError"] and message["sentAt"] is None
    events = history(dispatch_client, dispatcher, order["id"])
    retrying = [e for e in events if e["kind"] == "message_retrying"]
    assert [(e["data"]["event"], e["data"]["channel"]) for e in retrying] == [("assigned", "sms")]
    assert retrying[0]["data"]["error"] == message["lastError"][:200]
    assert not any(e["kind"] == "message_sent" for e in events)
    # A second failed attempt adds nothing: the history says it once, and again when given up.
    clock.advance(timedelta(minutes=1))
    with dispatch_app.app_context():
        sender.run_pass()
    kinds = [e["kind"] for e in history(dispatch_client, dispatcher, order["id"])]
    assert kinds.count("message_retrying") == 1


def test_the_sms_parts_of_each_text_are_counted_after_its_placeholders_are_filled_in(
    dispatch_client, owner
) -> None:
    """Issue 46: the count ignored the {company} and {order} expansion; the Armenian "failed" text
    costs 3 parts once filled in, and was shown as 2."""
    from appliance.dispatch.messages.texts import DEFAULT_TEXTS, sms_shape

    failed_hy = DEFAULT_TEXTS["failed"]["hy"]
    assert sms_shape(failed_hy.replace("{link}", "https://d.example/t/" + "x" * 32))["segments"] == 2
    Company.update(name="Arev Delivery Yerevan").execute()
    settings = dispatch_client.get("/company/messages", headers=owner.headers).json["settings"]
    assert settings["segments"]["failed"]["hy"] == 3
    assert set(settings["segments"]) == set(DEFAULT_TEXTS)
    # The company's own text counts as it is filled in too, and a longer name may cost a part.
    own = {"templates": {"delivered": {"en": "{company}: order {order} delivered. {link}"}}}
    saved = dispatch_client.patch("/company/messages", json=own, headers=owner.headers).json["settings"]
    assert saved["segments"]["delivered"]["en"] == 1


def test_a_courier_waiting_for_an_earlier_stops_window_is_not_arriving_at_the_next_one(
    dispatch_app, dispatch_client, owner, dispatcher, courier, sender
) -> None:
    """Issue 46: the next stop is minutes away by road, but the courier first waits two hours for
    the earlier stop's window: its recipient hears nothing yet, and is told late once that wait
    pushes the hand-over past its own window."""
    set_up_sms(dispatch_client, owner, free_port(), events=["arriving", "late"], arrivingMinutes=10)
    first = assigned_order(
        dispatch_client,
        dispatcher,
        courier,
        deliveryWindowStart=clock.iso(clock.now() + timedelta(hours=2)),
        deliveryWindowEnd=clock.iso(clock.now() + timedelta(hours=4)),
    )
    second = assigned_order(
        dispatch_client, dispatcher, courier, deliveryWindowEnd=clock.iso(clock.now() + timedelta(hours=1))
    )
    for order in (first, second):
        assert courier_status(dispatch_client, courier, order["id"], status="picked_up").status_code == 200
    CourierLocation.create(
        courier=courier.courier.id,
        lat=second["pin"]["lat"],
        lon=second["pin"]["lon"] + 0.001,
        captured_at=clock.now(),
        received_at=clock.now(),
    )
    sender.estimate_every_seconds = 0
    with dispatch_app.app_context():
        sender.run_pass()
    rows = {(r.order_id, r.event): json.loads(r.data) for r in RecipientMessage.select()}
    assert set(rows) == {(int(second["id"]), "late")}
    assert rows[(int(second["id"]), "late")]["minutes"] >= 60
