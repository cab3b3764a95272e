"""The one Runtime both services extend: each app keeps its own typed runtime under its name."""

from __future__ import annotations

import pytest
from flask import Flask

from appliance.common.db import is_sqlite
from appliance.common.health import HealthRegistry
from appliance.common.runtime import Runtime
from appliance.engine.db import database
from appliance.engine.runtime import EngineRuntime


def test_the_engine_app_keeps_an_engine_runtime_with_its_chains_and_workers(engine_app):
    runtime = EngineRuntime.of(engine_app)
    assert runtime.chains.get("eth_local") is not None
    assert [name for name, _ in runtime.workers] == [
        "payouts",
        "deposits",
        "webhooks",
        "reports",
        "exports",
        "treasury",
        "sweeps",
        "local-chain",
        *(["checkpoint"] if is_sqlite(database) else []),
    ]
    with engine_app.app_context():
        assert EngineRuntime.current() is runtime


def test_a_runtime_without_a_service_name_cannot_be_installed(settings):
    runtime = Runtime(settings=settings, master_key=b"k" * 32, health=HealthRegistry())
    with pytest.raises(TypeError, match="names its SERVICE"):
        runtime.install(Flask(__name__))
