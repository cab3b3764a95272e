"""What the contract tests share: how many examples, which checks, and the hypothesis settings.

The bounded stage (`make test-fuzz`) generates FUZZ_EXAMPLES requests per operation and caller
(default 12); `make fuzz` runs longer (FUZZ_EXAMPLES=150 unless given). Every generated request is
counted per operation, so the run can report what it sent (tests/fuzz/README.md).
"""

from __future__ import annotations

import collections
import os
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase
from hypothesis import settings as hypothesis_settings
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "12"))


def no_internal_error(ctx, response, case) -> None:
    """Never a 500. Other 5xx are answers some operations document (503 of /healthz before roads
    are built, 502 of a failing solver): status_code_conformance holds them to their documents."""
    if response.status_code == 500:
        raise AssertionError(f"500 from {case.method} {case.path}: {response.text[:500]}")


# Never a 500, every status documented, the documented content type, and a body that matches the
# documented schema of that status.
CHECKS = [no_internal_error, status_code_conformance, content_type_conformance, response_schema_conformance]

SETTINGS = hypothesis_settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=os.environ.get("FUZZ_RANDOM", "") == "",
    database=None,
    suppress_health_check=list(HealthCheck),
    phases=[Phase.explicit, Phase.generate],
    print_blob=True,
)

# Requests sent, per "service METHOD path", and the statuses they were answered with.
SENT: collections.Counter[str] = collections.Counter()
ANSWERED: dict[str, collections.Counter[int]] = collections.defaultdict(collections.Counter)


def send(service: str, case, app, headers: dict[str, str], **kwargs: Any) -> None:
    """Send one generated case to ``app`` and hold the answer to the document (CHECKS)."""
    operation = f"{service} {case.method.upper()} {case.path}"
    # A large JSON answer is sent gzip-encoded to a client that accepts it (common/webapp.py,
    # tested there); schemathesis's in-process transport would read the compressed bytes as JSON.
    headers = {"Accept-Encoding": "identity", **headers}
    response = case.call(app=app, headers=headers, **kwargs)
    SENT[operation] += 1
    ANSWERED[operation][response.status_code] += 1
    case.validate_response(response, checks=CHECKS, headers=headers, transport_kwargs={"app": app, **kwargs})


def report() -> dict[str, Any]:
    services = collections.Counter(name.split(" ", 1)[0] for name in SENT.elements())
    return {
        "examplesPerOperation": EXAMPLES,
        "requests": sum(SENT.values()),
        "perService": dict(services),
        "perOperation": {
            name: {"sent": SENT[name], "statuses": dict(ANSWERED[name])} for name in sorted(SENT)
        },
    }


def document(service: str) -> dict[str, Any]:
    """The OpenAPI document an app of ``service`` serves, built once at collection (schemathesis
    parametrizes from it); each test then sends its cases to its own app on its own data."""
    from appliance.settings import load_settings

    with tempfile.TemporaryDirectory() as directory:
        settings = load_settings({"data_dir": str(Path(directory))}, environ={})
        if service == "dispatch":
            from appliance.dispatch.app import create_app
        else:
            from appliance.engine.app import create_app  # type: ignore[assignment]
        app = create_app(settings)
        return app.test_client().get("/openapi.json").json
