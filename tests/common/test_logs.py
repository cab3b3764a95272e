"""Log injection (issue 18, item 1): a line feed in a logged value cannot forge a log line."""

from __future__ import annotations

import io
import logging

from appliance.common.logs import SafeFormatter


def _captured(app, path: str) -> str:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(SafeFormatter("%(levelname)s %(name)s %(message)s"))
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        app.test_client().get(path)
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
    return stream.getvalue()


def test_a_decoded_line_feed_in_a_path_stays_on_one_log_line(dispatch_app, engine_app) -> None:
    forged = "/track/x%0AINFO%20appliance.webapp%20GET%20/admin%20200%20request_id=forged"
    for app, path in ((dispatch_app, forged), (engine_app, forged.replace("/track/", "/v1/payouts/"))):
        text = _captured(app, path)
        request_lines = [line for line in text.splitlines() if "/x" in line]
        assert len(request_lines) == 1, text
        assert "\\n" in request_lines[0] and not any(
            line.startswith("INFO appliance.webapp GET /admin") for line in text.splitlines()
        )


def test_tracebacks_keep_their_lines_while_messages_are_escaped() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(SafeFormatter("%(message)s"))
    logger = logging.getLogger("test.safe")
    logger.addHandler(handler)
    try:
        try:
            raise ValueError("boom")
        except ValueError:
            logger.exception("failed for %s", "a\nb\x1b[31m")
    finally:
        logger.removeHandler(handler)
    first, *rest = stream.getvalue().splitlines()
    assert first == "failed for a\\nb\\x1b[31m"
    assert rest[0].startswith("Traceback") and rest[-1] == "ValueError: boom"


def test_a_nul_character_in_any_text_is_refused_before_anything_is_stored(dispatch_app, engine_app) -> None:
    from appliance.dispatch.models import Company
    from tests.dispatch.factory import make_company, make_member
    from tests.engine.helpers import Signer, make_operator

    client = dispatch_app.test_client()
    owner = make_member(dispatch_app, make_company("Arev"), "owner")
    response = client.patch("/company", json={"name": "Arev\u0000Express"}, headers=owner.headers)
    assert response.status_code in (400, 422) and "NUL" in response.get_json()["detail"] + str(
        response.get_json()
    )
    assert Company.get_by_id(owner.membership.company_id).name == "Arev"
    courier = make_member(dispatch_app, make_company("Gazelle"), "courier")
    point = {"lat": 40.18, "lon": 44.51, "capturedAt": "2026-11-23T05:00:00Z", "source": "gps\u0000"}
    assert client.post(
        "/courier/location", json={"points": [point]}, headers=courier.headers
    ).status_code in (400, 422)
    op = make_operator(engine_app)
    signer = Signer(engine_app.test_client(), op["operatorId"], op["secret"])
    answer = signer.request(
        "POST", "/v1/deposit-addresses", {"accountRef": "a\u0000b", "chainId": "eth_local"}
    )
    assert answer.status_code == 400
