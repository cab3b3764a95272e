"""The mail queue under attack (issue 41): a name with a line break is refused before anything is
made (item 6); a row no message can be made from is failed with its reason and never holds up the
mail behind it (item 6); a request only queues, the same work whether or not the account exists,
and the worker sends (item 7); a queued row holds no raw link token (item 8)."""

from __future__ import annotations

import logging
import re
import threading

import pytest

from appliance.common import clock
from appliance.common.passwords import hash_password
from appliance.dispatch.models import Company, Depot, OutgoingMail, User
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.mail import mail_text, sent_mail, wait_for_mail

DEPOT = {"name": "Main", "address": "Tumanyan 5", "point": {"lat": 40.18, "lon": 44.51}}
BREAKS = [
    "Poison\r\nX-Injected: 1",
    "Poison\nBcc: all@example.am",
    "Tab\there",
    "Line\u2028break",
    "Bell\x07",
]


def _signup(client, company_name: str, email: str = "aram@example.am"):
    body = {"company": {"name": company_name}, "owner": {"name": "Aram", "email": email}, "depot": DEPOT}
    return client.post("/auth/signup", json=body)


@pytest.fixture
def owner(dispatch_app):
    return make_member(
        dispatch_app,
        make_company("Arev"),
        "owner",
        email="ani@example.am",
        password_hash=hash_password("pw-12345678"),
    )


# -- item 6: names with line breaks, and a queue a bad row cannot stop ----------------------------


@pytest.mark.parametrize("name", BREAKS)
def test_a_sign_up_whose_company_name_breaks_a_line_is_refused_and_creates_nothing(
    dispatch_client, name
) -> None:
    answer = _signup(dispatch_client, name)
    assert answer.status_code == 400 and answer.content_type == "application/problem+json"
    assert [e["field"] for e in answer.json["errors"]] == ["company.name"]
    assert Company.select().count() == 0 and User.select().count() == 0 and Depot.select().count() == 0
    assert OutgoingMail.select().count() == 0


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("post", "/company/invites", {"role": "courier", "name": "Narek\r\nBcc: x@example.am"}),
        ("post", "/company/invites", {"role": "courier", "name": "Narek", "vehicle": "Van\n2"}),
        ("patch", "/company", {"name": "Arev\r\nX-Injected: 1"}),
        ("post", "/company/depots", {**DEPOT, "name": "Depot\n2"}),
        ("post", "/couriers", {"email": "c@example.am", "password": "x" * 8, "displayName": "Aram\rX"}),
        ("patch", "/me", {"language": "en"}),  # a control: a clean body goes through
    ],
)
def test_names_and_labels_that_break_a_line_are_refused_wherever_they_are_written(
    dispatch_client, owner, method, path, body
) -> None:
    answer = getattr(dispatch_client, method)(path, json=body, headers=owner.headers)
    if path == "/me":
        assert answer.status_code == 200
        return
    assert answer.status_code == 400, answer.json
    assert answer.content_type == "application/problem+json"


def test_a_mail_that_cannot_be_built_is_failed_with_its_reason_and_the_mail_behind_it_goes_out(
    dispatch_app, dispatch_client, owner, data_dir
) -> None:
    # As an older version queued it: a company name with a line break in the subject.
    moment = clock.now()
    OutgoingMail.insert(
        to_address="aram@example.am",
        subject="Welcome to Poison\r\nX-Injected: 1: sign in",
        body="Hello Aram",
        next_attempt_at=moment,
        created_at=moment,
    ).execute()
    assert dispatch_client.post("/auth/magic-link", json={"email": "ani@example.am"}).status_code == 202

    mailer = dispatch_app.extensions["dispatch"].mailer
    assert mailer.deliver_due() == 1  # one pass: the good message went out, the bad one did not stop it
    bad, good = OutgoingMail.select().order_by(OutgoingMail.id)
    assert bad.status == "failed" and bad.attempts == 1 and bad.lease_until is None
    assert "linefeed" in bad.last_error or "line" in bad.last_error.lower()
    assert good.status == "sent"
    (mail,) = (data_dir / "outbox").glob("*.eml")
    assert "To: ani@example.am" in mail_text(mail) and b"X-Injected" not in mail.read_bytes()
    # Never tried again.
    assert mailer.deliver_due() == 0 and OutgoingMail.get_by_id(bad.id).attempts == 1


def test_a_company_name_stored_with_a_line_break_by_an_older_version_no_longer_stops_its_mail(
    dispatch_client, owner
) -> None:
    Company.update(name="Arev\r\nX-Injected: 1").where(Company.id == owner.membership.company_id).execute()
    invited = dispatch_client.post(
        "/company/invites",
        json={"role": "courier", "name": "Narek", "email": "narek@example.am"},
        headers=owner.headers,
    )
    assert invited.status_code == 201
    (mail,) = sent_mail(dispatch_client)
    assert "Subject: Arev X-Injected: 1" in mail_text(mail) and b"\nX-Injected" not in mail.read_bytes()
    assert OutgoingMail.get().status == "sent"


# -- item 7: a request only queues, the same work either way ---------------------------------------


def _statements(caplog, client, path: str, email: str) -> list[str]:
    """The SQL a request ran, without its values."""
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="peewee"):
        assert client.post(path, json={"email": email}).status_code == 202
    return [
        r.msg[0] if isinstance(r.msg, tuple) else r.getMessage() for r in caplog.records if r.name == "peewee"
    ]


@pytest.mark.parametrize(
    ("path", "marker"), [("/auth/magic-link", "/login?token="), ("/auth/password/forgot", "/login?password=")]
)
def test_asking_for_a_link_does_the_same_work_for_an_account_and_for_none_and_sends_nothing(
    dispatch_client, owner, data_dir, caplog, path, marker
) -> None:
    existing = _statements(caplog, dispatch_client, path, "ani@example.am")
    missing = _statements(caplog, dispatch_client, path, "ghost@example.am")
    assert existing == missing and existing  # the same statements, values aside
    assert not any("user" in sql.lower() and "from" in sql.lower() for sql in existing), existing
    outbox = data_dir / "outbox"
    assert not outbox.exists() or not list(outbox.glob("*.eml"))  # nothing sent while answering
    # The worker: the account gets its link, the address without one nothing (its row goes).
    (mail,) = sent_mail(dispatch_client)
    assert "To: ani@example.am" in mail_text(mail) and marker in mail_text(mail)
    assert [row.to_address for row in OutgoingMail.select()] == ["ani@example.am"]


def test_a_running_worker_sends_a_queued_link_at_once_not_at_its_next_look(
    dispatch_app, dispatch_client, owner, data_dir
) -> None:
    """The worker looks every hour here: only the wake of the queueing commit can send it."""
    mailer = dispatch_app.extensions["dispatch"].mailer
    stop = threading.Event()
    worker = threading.Thread(target=mailer.worker, args=(stop, 3600.0), daemon=True)
    worker.start()
    try:
        assert dispatch_client.post("/auth/magic-link", json={"email": "ani@example.am"}).status_code == 202
        (mail,) = wait_for_mail(data_dir / "outbox", seconds=30)
        assert "/login?token=" in mail_text(mail)
    finally:
        stop.set()
        worker.join(10)


# -- item 8: no raw token in a queued row --------------------------------------------------------------


def _row_texts() -> list[str]:
    """Every value of every outgoing_mail row as text (binary ones too)."""
    cursor = OutgoingMail._meta.database.execute_sql("SELECT * FROM outgoing_mail")
    return [
        bytes(value).decode("latin-1") if isinstance(value, (bytes, memoryview)) else str(value)
        for row in cursor.fetchall()
        for value in row
    ]


def test_a_queued_mail_row_holds_no_raw_token_of_the_link_the_mail_carries(
    dispatch_client, owner, settings
) -> None:
    assert _signup(dispatch_client, "Gazelle").status_code == 202
    invited = dispatch_client.post(
        "/company/invites",
        json={"role": "courier", "name": "Narek", "email": "narek@example.am"},
        headers=owner.headers,
    )
    assert invited.status_code == 201
    queued = _row_texts()
    assert [row.status for row in OutgoingMail.select()] == ["queued", "queued"]
    mails = [mail_text(path) for path in sent_mail(dispatch_client)]
    tokens = [re.search(r"/(?:login\?token=|invite/)([A-Za-z0-9_-]{20,})", text).group(1) for text in mails]
    assert len(tokens) == 2
    for token in tokens:
        assert all(token not in value for value in queued), "a raw token rests in a queued row"
        assert all(token not in value for value in _row_texts()), "a raw token rests in a sent row"
    # The links went out whole, and work.
    welcome = next(t for t, text in zip(tokens, mails, strict=True) if "/login?token=" in text)
    assert dispatch_client.post("/auth/magic-link/verify", json={"token": welcome}).status_code == 200
