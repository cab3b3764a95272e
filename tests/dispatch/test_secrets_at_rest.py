"""One-time secrets never rest readable by anyone else (issue 33): after a sign-in link, an invite
and a tracking link, with a real SMTP server configured, no raw token is in any row of either
database or in any log line, and no file of the data directory is readable by another user."""

from __future__ import annotations

import io
import logging
import os
import re
import sqlite3
import stat
from pathlib import Path

import pytest

from appliance.common.logs import JsonFormatter, SafeFormatter
from appliance.dispatch.app import create_app
from appliance.dispatch.models import OutgoingMail
from appliance.serving.process import _private_data_dir
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.mail import mail_text, send_queued, sent_mail
from tests.dispatch.orders_helpers import create_order
from tests.dispatch.test_mail_and_limits import smtp_server  # noqa: F401 - the fixture


@pytest.fixture
def private_process(settings):
    """What `appliance serve` does first: umask 077 and the data directory tightened."""
    previous = os.umask(0o022)
    _private_data_dir(settings)
    yield
    os.umask(previous)


@pytest.fixture
def log_text():
    """Every log line of the appliance, in both formats, as an operator's log file holds them."""
    stream = io.StringIO()
    handlers = [logging.StreamHandler(stream), logging.StreamHandler(stream)]
    handlers[0].setFormatter(SafeFormatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    handlers[1].setFormatter(JsonFormatter())
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.INFO)
    for handler in handlers:
        root.addHandler(handler)
    yield stream.getvalue
    for handler in handlers:
        root.removeHandler(handler)
    root.setLevel(level)


def _database_texts(path: Path) -> str:
    """Every text value of every row of a SQLite database, read as a local reader of the data
    would (through SQL, not its free pages)."""
    connection = sqlite3.connect(path)
    try:
        values = []
        tables = [r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            for row in connection.execute(f'SELECT * FROM "{table}"'):
                values.extend(str(value) for value in row if value is not None)
        return "\n".join(values)
    finally:
        connection.close()


def _readable_by_others(root: Path) -> list[str]:
    paths = [str(root)]
    for folder, folders, files in os.walk(root):
        paths.extend(os.path.join(folder, name) for name in folders + files)
    found = []
    for path in paths:
        mode = os.lstat(path).st_mode
        if not stat.S_ISLNK(mode) and mode & 0o077:
            found.append(f"{os.path.relpath(path, root)} {oct(stat.S_IMODE(mode))}")
    return found


def test_no_raw_token_rests_in_the_databases_or_logs_and_no_file_is_readable_by_others(
    settings,
    smtp_server,  # noqa: F811 - the fixture imported above
    private_process,
    log_text,
) -> None:
    port = smtp_server.server_address[1]
    app = create_app(settings.replace(smtp_url=f"smtp://127.0.0.1:{port}"))
    app.testing = True
    client = app.test_client()
    company = make_company("Arev")
    owner = make_member(app, company, "owner", email="owner@example.am")

    # A sign-in link, mailed and used.
    assert client.post("/auth/magic-link", json={"email": "owner@example.am"}).status_code == 202
    # An invite, mailed, previewed and opened.
    invite = client.post(
        "/company/invites",
        json={"role": "courier", "name": "Narek", "email": "narek@example.am"},
        headers=owner.headers,
    )
    assert invite.status_code == 201, invite.json
    send_queued(app)
    mails = [mail_text(message) for message in smtp_server.messages]
    assert len(mails) == 2
    sign_in = re.search(r"/login\?token=([A-Za-z0-9_-]+)", mails[0]).group(1)
    invited = re.search(r"/invite/([A-Za-z0-9_-]+)", mails[1]).group(1)
    assert client.get(f"/auth/invite/{invited}").status_code == 200
    client.get(f"/invite/{invited}")
    verified = client.post("/auth/magic-link/verify", json={"token": sign_in})
    assert verified.status_code == 200
    # The link proved the owner's address, which ends the sessions begun before it (docs/identity.md):
    # the owner goes on with the session the link began.
    owner.access_token = verified.json["accessToken"]
    # A tracking link, opened as the customer would.
    order = create_order(client, owner)
    tracking = client.post(f"/orders/{order['id']}/tracking", json={}, headers=owner.headers).json["token"]
    assert client.get(f"/track/{tracking}").status_code == 200
    client.get(f"/t/{tracking}")
    client.get(f"/track/{tracking}/not-a-route")

    tokens = {"sign-in": sign_in, "invite": invited, "tracking": tracking}
    assert all(len(token) >= 32 for token in tokens.values())
    bodies = [mail.body for mail in OutgoingMail.select()]
    assert len(bodies) == 2 and all("{token}" in body for body in bodies)

    databases = {path.name: _database_texts(path) for path in settings.data_dir.glob("*.db")}
    assert {"dispatch.db", "engine.db"} <= set(databases)
    logs = log_text()
    assert "/track/{token}" in logs and "/auth/invite/{token}" in logs and "/t/{token}" in logs
    for kind, token in tokens.items():
        for name, text in databases.items():
            assert token not in text, f"the {kind} token is in {name}"
        assert token not in logs, f"the {kind} token is in the log"

    assert _readable_by_others(settings.data_dir) == []


def test_the_outbox_is_a_0700_folder_of_0600_files_when_no_smtp_server_is_set(
    settings, private_process
) -> None:
    os.umask(0o022)  # as a caller that did not go through `appliance`: the modes are the mailer's own
    app = create_app(settings)
    company = make_company("Arev")
    make_member(app, company, "owner", email="owner@example.am")
    assert app.test_client().post("/auth/magic-link", json={"email": "owner@example.am"}).status_code == 202
    outbox = settings.data_dir / "outbox"
    (eml,) = sent_mail(app)
    assert stat.S_IMODE(outbox.stat().st_mode) == 0o700
    assert stat.S_IMODE(eml.stat().st_mode) == 0o600
    assert "/login?token=" in mail_text(eml)  # the outbox is the mail itself
    (row,) = OutgoingMail.select()
    assert "{token}" in row.body and "/login?token={token}" in row.body
