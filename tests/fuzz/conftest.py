"""Worlds for the contract tests: a company with an owner, a dispatcher, a courier and some orders
on the dispatch side; an operator with a secret on the engine side. Each is a real app on a real
database (the suite's template data directory), reached in process through its WSGI interface."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path

import pytest

from appliance.settings import Settings, load_settings
from tests.conftest import TEMPLATE_FILES
from tests.dispatch.factory import Member, make_company, make_member
from tests.dispatch.orders_helpers import assigned_order, create_order, ready_order
from tests.engine.helpers import make_operator


def fuzz_settings(data_dir: Path) -> Settings:
    # Event streams end at once (a generated GET /events must not stream for minutes) and the
    # solver gets a short time limit (it would use up to its 2 s on every plan suggestion); public
    # rate limits stay on (their 429 is part of the contract).
    values = {"data_dir": str(data_dir), "event_stream_seconds": 0, "solver_time_limit_seconds": 0.2}
    return load_settings(values, environ={})


@dataclasses.dataclass
class DispatchWorld:
    app: object
    owner: Member
    dispatcher: Member
    courier: Member


def _data_dir(factory: pytest.TempPathFactory, template_dir: Path) -> Path:
    directory = factory.mktemp("fuzz")
    for name in TEMPLATE_FILES:
        shutil.copy2(template_dir / name, directory / name)
    return directory


# One app per test module: every operation's cases go to the same app, whose data grows as they
# are sent (as a real deployment's would).
@pytest.fixture(scope="module")
def dispatch_app(tmp_path_factory: pytest.TempPathFactory, template_dir: Path):
    from appliance.dispatch.app import create_app

    return create_app(fuzz_settings(_data_dir(tmp_path_factory, template_dir)))


# A fresh company for each operation: generated requests may end the callers' sessions (a member
# disabled or given another role, a logout), which must not turn every later operation into 401s.
@pytest.fixture
def dispatch_world(dispatch_app) -> DispatchWorld:
    app = dispatch_app
    with app.app_context():
        company = make_company()
        owner = make_member(app, company, "owner")
        dispatcher = make_member(app, company, "dispatcher")
        courier = make_member(app, company, "courier")
    # A draft, a ready and an assigned order, so that generated ids sometimes find one.
    client = app.test_client()
    create_order(client, dispatcher)
    ready_order(client, dispatcher)
    assigned_order(client, dispatcher, courier)
    return DispatchWorld(app, owner, dispatcher, courier)


@dataclasses.dataclass
class EngineWorld:
    app: object
    operator_id: str
    secret: str


@pytest.fixture(scope="module")
def engine_world(tmp_path_factory: pytest.TempPathFactory, template_dir: Path) -> EngineWorld:
    from appliance.engine.app import create_app
    from appliance.engine.custody_file import create_custody_key

    data_dir = _data_dir(tmp_path_factory, template_dir)
    create_custody_key(data_dir)  # so that deposit addresses are derived (503 without a key)
    app = create_app(fuzz_settings(data_dir))
    operator = make_operator(app, "op_fuzzing0001")
    return EngineWorld(app, operator["operatorId"], operator["secret"])


# The contract tests run in their own stage (make test-fuzz, make fuzz), which sets FUZZ_EXAMPLES;
# the ordinary suite (make test) leaves them out.
if not os.environ.get("FUZZ_EXAMPLES"):
    collect_ignore_glob = ["test_*.py"]


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Write what was sent (tests/fuzz/README.md) to test-artifacts/fuzz-report.json."""
    from tests.fuzz.contract import report

    summary = report()
    if not summary["requests"]:
        return
    out = Path(session.config.rootpath) / "test-artifacts" / "fuzz-report.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(summary, indent=1) + "\n")
    print(
        f"\nfuzz: {summary['requests']} requests generated ({summary['perService']}), "
        f"{len(summary['perOperation'])} operations, {summary['examplesPerOperation']} examples per "
        f"operation and caller; per operation in {out}"
    )
