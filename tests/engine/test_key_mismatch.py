"""A node whose appliance.key differs from the one the operator secrets were encrypted under (a
second node set up with its own key, a restore without its key): it answers the operators' signed
requests with the ordinary 401, never a 500, says why in its log, and is not ready, so a load
balancer takes it out (docs/operations.md, Several hosts)."""

from __future__ import annotations

import logging
from pathlib import Path

from appliance.engine.app import create_app
from tests.engine.helpers import Signer, make_operator

OPAQUE = "Request authentication failed."


def _node_with_another_key(settings, tmp_path: Path):
    other = tmp_path / "other-node"
    other.mkdir()
    if (settings.data_dir / "appliance.toml").exists():  # the same databases (PostgreSQL runs)
        (other / "appliance.toml").write_text((settings.data_dir / "appliance.toml").read_text())
    # No appliance.key in its data directory: it makes one of its own, as a new node would.
    return create_app(settings.replace(data_dir=other, engine_database=settings.engine_db_url))


def test_a_node_with_another_appliance_key_answers_401_logs_why_and_is_not_ready(
    settings, engine_app, tmp_path: Path, caplog
) -> None:
    operator = make_operator(engine_app)
    ours = Signer(engine_app.test_client(), operator["operatorId"], operator["secret"])
    assert ours.request("GET", "/v1/payouts").status_code == 200
    assert engine_app.test_client().get("/health/ready").json["checks"]["keys"] == "pass"

    other = _node_with_another_key(settings, tmp_path)
    theirs = Signer(other.test_client(), operator["operatorId"], operator["secret"])
    with caplog.at_level(logging.WARNING, logger="appliance.engine.auth"):
        refused = theirs.request("GET", "/v1/payouts")
    assert refused.status_code == 401 and refused.json["detail"] == OPAQUE
    assert "appliance.key does not decrypt the operator secrets" in caplog.text
    ready = other.test_client().get("/health/ready")
    assert ready.status_code == 503 and ready.json["checks"]["keys"] == "fail"


def test_an_engine_without_operators_is_ready_whatever_its_key(engine_client) -> None:
    assert engine_client.get("/health/ready").json["checks"]["keys"] == "pass"
