"""Corrections from a review against the specification (issue 17): each test failed before its fix."""

from __future__ import annotations

import pytest

from appliance.dispatch.models import Courier, Membership, Order
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.mail import mail_text, sent_mail
from tests.dispatch.orders_helpers import assigned_order, courier_status, create_order, ready_order


@pytest.fixture
def team(dispatch_app):
    company = make_company("Arev")
    return (
        dispatch_app.test_client(),
        make_member(dispatch_app, company, "owner"),
        make_member(dispatch_app, company, "courier"),
    )


def _courier_can_work(client, courier) -> bool:
    return client.get("/courier/me", headers=courier.headers).status_code == 200


def test_disabling_a_couriers_membership_makes_the_courier_inactive_and_frees_their_assigned_orders(
    team,
) -> None:
    client, owner, courier = team
    waiting = assigned_order(client, owner, courier)
    carried = assigned_order(client, owner, courier)
    assert courier_status(client, courier, carried["id"], status="picked_up").status_code == 200
    response = client.patch(
        f"/company/members/{courier.user.id}", json={"status": "disabled"}, headers=owner.headers
    )
    assert response.status_code == 200
    assert Courier.get_by_id(courier.courier.id).active is False
    assert Order.get_by_id(int(waiting["id"])).status == "ready"  # back in the pool
    assert Order.get_by_id(int(carried["id"])).status == "picked_up"  # the parcel is with the courier
    order = ready_order(client, owner)
    refused = client.post(
        f"/orders/{order['id']}/assign", json={"courierId": courier.courier.id}, headers=owner.headers
    )
    assert refused.status_code == 404
    assert not _courier_can_work(client, courier)


def test_deactivating_a_courier_ends_their_sessions_and_sign_in_and_reactivating_restores_both(team) -> None:
    client, owner, courier = team
    waiting = assigned_order(client, owner, courier)
    response = client.patch(f"/couriers/{courier.courier.id}", json={"active": False}, headers=owner.headers)
    assert response.status_code == 200 and response.json["courier"]["active"] is False
    assert not _courier_can_work(client, courier)
    membership = Membership.get(
        (Membership.user == courier.user.id) & (Membership.company == owner.membership.company_id)
    )
    assert membership.status == "disabled"
    assert Order.get_by_id(int(waiting["id"])).status == "ready"
    members = client.get("/company/members", headers=owner.headers).json
    assert any(m["status"] == "disabled" for m in members["members"] if m["userId"] == str(courier.user.id))
    back = client.patch(f"/couriers/{courier.courier.id}", json={"active": True}, headers=owner.headers)
    assert back.status_code == 200
    assert Membership.get_by_id(membership.id).status == "active"


def test_a_retried_order_gets_a_fresh_delivery_code_and_budget(team, dispatch_app) -> None:
    client, owner, courier = team
    order = assigned_order(client, owner, courier, otpRequired=True)
    courier_status(client, courier, order["id"], status="picked_up")
    for _ in range(10):
        courier_status(client, courier, order["id"], status="delivered", otpCode="000000")
    locked = courier_status(client, courier, order["id"], status="delivered", otpCode="000000")
    assert locked.status_code == 423
    assert (
        courier_status(client, courier, order["id"], status="failed", failureReason="refused").status_code
        == 200
    )
    retry = client.post(f"/orders/{order['id']}/status", json={"status": "ready"}, headers=owner.headers)
    assert retry.status_code == 200
    assert Order.get_by_id(int(order["id"])).otp_attempts == 0
    client.post(
        f"/orders/{order['id']}/assign", json={"courierId": courier.courier.id}, headers=owner.headers
    )
    courier_status(client, courier, order["id"], status="picked_up")
    wrong = courier_status(client, courier, order["id"], status="delivered", otpCode="000000")
    assert wrong.status_code == 422  # a wrong code again, not locked


def test_a_dispatcher_can_reset_a_locked_delivery_code(team) -> None:
    client, owner, courier = team
    order = assigned_order(client, owner, courier, otpRequired=True)
    courier_status(client, courier, order["id"], status="picked_up")
    assert (
        client.get(f"/orders/{order['id']}", headers=owner.headers).json["order"]["deliveryCodeLocked"]
        is False
    )
    for _ in range(11):
        courier_status(client, courier, order["id"], status="delivered", otpCode="000000")
    assert (
        client.get(f"/orders/{order['id']}", headers=owner.headers).json["order"]["deliveryCodeLocked"]
        is True
    )
    reset = client.post(f"/orders/{order['id']}/delivery-code/reset", headers=owner.headers)
    assert reset.status_code == 200
    assert reset.json["order"]["deliveryCodeLocked"] is False
    assert Order.get_by_id(int(order["id"])).otp_attempts == 0
    events = client.get(f"/orders/{order['id']}/events", headers=owner.headers).json["events"]
    assert "delivery_code_reset" in [e["kind"] for e in events]
    plain = create_order(client, owner)
    assert client.post(f"/orders/{plain['id']}/delivery-code/reset", headers=owner.headers).status_code == 409
    assert (
        client.post(f"/orders/{order['id']}/delivery-code/reset", headers=courier.headers).status_code == 403
    )


def test_a_dispatcher_fails_an_order_without_a_reason_or_with_one_recorded_as_given(team) -> None:
    client, owner, courier = team
    silent = assigned_order(client, owner, courier)
    courier_status(client, courier, silent["id"], status="picked_up")
    response = client.post(f"/orders/{silent['id']}/status", json={"status": "failed"}, headers=owner.headers)
    assert response.status_code == 200 and response.json["order"]["status"] == "failed"
    coded = assigned_order(client, owner, courier)
    courier_status(client, courier, coded["id"], status="picked_up")
    response = client.post(
        f"/orders/{coded['id']}/status",
        json={"status": "failed", "reason": "wrong_address"},
        headers=owner.headers,
    )
    assert response.json["order"]["failureReason"] == "wrong_address"
    told = assigned_order(client, owner, courier)
    courier_status(client, courier, told["id"], status="picked_up")
    client.post(
        f"/orders/{told['id']}/status",
        json={"status": "failed", "reason": "the shop closed early"},
        headers=owner.headers,
    )
    events = client.get(f"/orders/{told['id']}/events", headers=owner.headers).json["events"]
    failed = [e for e in events if e.get("toStatus") == "failed"][-1]
    assert failed["data"]["reason"] == "the shop closed early"


def test_tracking_links_live_as_long_as_the_setting_says_unless_asked_otherwise(settings) -> None:
    from datetime import datetime, timedelta

    from appliance.common import clock
    from appliance.dispatch.app import create_app

    app = create_app(settings.replace(tracking_ttl_hours=5))
    client = app.test_client()
    company = make_company("Arev")
    owner = make_member(app, company, "owner")
    order = create_order(client, owner)
    link = client.post(f"/orders/{order['id']}/tracking", json={}, headers=owner.headers).json
    expires = datetime.fromisoformat(link["expiresAt"].replace("Z", "+00:00"))
    assert abs(expires - (clock.now() + timedelta(hours=5))) < timedelta(minutes=1)
    asked = client.post(f"/orders/{order['id']}/tracking", json={"ttlHours": 24}, headers=owner.headers).json
    expires = datetime.fromisoformat(asked["expiresAt"].replace("Z", "+00:00"))
    assert abs(expires - (clock.now() + timedelta(hours=24))) < timedelta(minutes=1)


def test_the_late_notice_names_the_companys_sms_sender(team) -> None:
    client, owner, courier = team
    client.patch("/company", json={"smsSender": "AREV"}, headers=owner.headers)
    order = assigned_order(client, owner, courier)
    courier_status(client, courier, order["id"], status="picked_up")
    notice = client.post(
        f"/orders/{order['id']}/notify-late", json={"delayMinutes": 20}, headers=owner.headers
    )
    assert notice.status_code == 201
    assert notice.json["sender"] == "AREV" and "20" in notice.json["message"]
    assert notice.json["trackingLink"]["url"].startswith("http")


def test_signing_up_with_an_existing_accounts_email_makes_it_owner_only_through_the_emailed_link(
    dispatch_app, data_dir
) -> None:
    from appliance.common.passwords import hash_password

    client = dispatch_app.test_client()
    company = make_company("Arev")
    victim = make_member(
        dispatch_app, company, "owner", email="ani@example.am", password_hash=hash_password("ani-pass-1")
    )
    body = {
        "company": {"name": "Impostor"},
        "owner": {"name": "Someone", "email": "ani@example.am"},
        "depot": {"name": "Main", "address": "Tumanyan 5", "point": {"lat": 40.18, "lon": 44.51}},
    }
    assert client.post("/auth/signup", json=body).status_code == 202
    new = Membership.get((Membership.user == victim.user.id) & (Membership.company != company.id))
    assert new.status == "pending"
    session = client.post("/auth/login", json={"email": "ani@example.am", "password": "ani-pass-1"}).json
    assert session["company"]["name"] == "Arev"
    switched = client.post(
        "/auth/switch-company",
        json={"companyId": str(new.company_id)},
        headers={"Authorization": f"Bearer {session['accessToken']}"},
    )
    assert switched.status_code == 403  # not an owner of Impostor without the emailed link
    mail = mail_text(sent_mail(client)[-1])
    token = mail.split("/login?token=")[1].split()[0]
    claimed = client.post("/auth/magic-link/verify", json={"token": token})
    assert claimed.status_code == 200 and claimed.json["company"]["name"] == "Impostor"
    assert Membership.get_by_id(new.id).status == "active"


def test_an_order_failed_by_a_dispatcher_appears_in_the_couriers_history(team) -> None:
    client, owner, courier = team
    order = assigned_order(client, owner, courier)
    courier_status(client, courier, order["id"], status="picked_up")
    client.post(
        f"/orders/{order['id']}/status", json={"status": "failed", "reason": "refused"}, headers=owner.headers
    )
    history = client.get("/courier/history", headers=courier.headers).json["history"]
    assert [(h["orderId"], h["status"]) for h in history] == [(order["id"], "failed")]


def test_a_phone_photo_of_twelve_megabytes_uploads(dispatch_app) -> None:
    client = dispatch_app.test_client()
    store = dispatch_app.extensions["dispatch"].objects
    upload = store.presign_put("1/p/phone.jpg", "image/jpeg")
    path = upload.url.split("://", 1)[1].split("/", 1)[1]
    response = client.put("/" + path, data=b"\xff" * (12 * 1024 * 1024), content_type="image/jpeg")
    assert response.status_code == 200, response.get_json()
    assert store.exists("1/p/phone.jpg")
    assert store.max_bytes == 15 * 1024 * 1024


@pytest.mark.parametrize(
    "answer",
    [
        b'{"status": "ok"}',  # no trip
        b'{"trip": {"legs": [{"shape": 42}], "summary": {}}}',
        b'{"trip": null}',
        b"not json at all",
        b'{"sources_to_targets": [[{"time": 1}]]}',  # a matrix of the wrong size
    ],
)
def test_a_malformed_valhalla_answer_falls_back_to_straight_lines_never_a_500(answer: bytes) -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    from appliance.dispatch.routing.engines import Router, StraightLine, Valhalla

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        router = Router(Valhalla(f"http://127.0.0.1:{server.server_address[1]}"), StraightLine(1.3, 25))
        points = [(40.18, 44.51), (40.19, 44.52), (40.20, 44.50)]
        assert router.route(points[:2]).method == "straight_line"
        assert router.table(points, points).method == "straight_line"
    finally:
        server.shutdown()


def test_e_mails_speak_the_recipients_language(dispatch_app, data_dir) -> None:
    from email import message_from_bytes, policy

    client = dispatch_app.test_client()
    company = make_company("Arev")
    owner = make_member(dispatch_app, company, "owner", email="ani@example.am")

    def last_mail():
        path = sent_mail(client)[-1]
        return message_from_bytes(path.read_bytes(), policy=policy.default)

    client.post("/auth/magic-link", json={"email": "ani@example.am"})
    assert last_mail()["Subject"] == "Մուտքի հղում"  # Armenian first
    changed = client.patch("/me", json={"language": "ru"}, headers=owner.headers)
    assert changed.status_code == 200 and changed.json["user"]["language"] == "ru"
    client.post("/auth/magic-link", json={"email": "ani@example.am"})
    assert last_mail()["Subject"] == "Ссылка для входа"
    client.post(
        "/company/invites",
        json={"email": "new@example.am", "name": "Lilit", "role": "courier"},
        headers=owner.headers,
    )
    invite = last_mail()
    assert invite["Subject"] == "Arev приглашает вас" and "курьер" in invite.get_content()
    assert client.patch("/me", json={"language": "de"}, headers=owner.headers).status_code == 400
