"""A payout worker that kills itself with SIGKILL at one chosen point of the pipeline (test helper).

    python -m tests.engine.crash_pipeline DATA_DIR POINT

POINT is where the process dies: ``signing`` (payload signed, SIGNED not yet committed),
``signed`` (SIGNED committed, nothing sent), ``sent`` (the chain took the bytes, the attempt is not
recorded) or ``receipt`` (broadcast, before the receipt is read). Nothing in the product knows about
this: the points are reached by wrapping the real functions from outside.
"""

from __future__ import annotations

import os
import signal
import sys
from datetime import timedelta
from typing import Any

from appliance.engine.app import create_app
from appliance.engine.db import database
from appliance.engine.payouts import pipeline as pipeline_module
from appliance.settings import load_settings


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def main(data_dir: str, point: str) -> None:
    settings = load_settings({"data_dir": data_dir}, environ=dict(os.environ))
    app = create_app(settings)
    runtime = app.extensions["engine"]
    chain = runtime.chains.get("eth_local")
    pipeline = pipeline_module.Pipeline(
        runtime.chains, runtime.custody, lease=timedelta(seconds=1), poll=timedelta(0)
    )

    if point == "signing":
        real_transition = pipeline_module.transition

        def transition(payout: Any, to: str, *args: Any, **kwargs: Any) -> Any:
            if to == "SIGNED":
                die()
            return real_transition(payout, to, *args, **kwargs)

        pipeline_module.transition = transition  # type: ignore[assignment]
    elif point == "signed":
        real_prepare = pipeline.prepare

        def prepare(payout: Any) -> Any:
            outcome = real_prepare(payout)
            if pipeline_module.Payout.get_by_id(payout.id).status == "SIGNED":
                die()
            return outcome

        pipeline.prepare = prepare  # type: ignore[method-assign]
    elif point == "sent":
        real_send = chain.send_raw_transaction

        def send_raw_transaction(raw: bytes) -> str:
            real_send(raw)
            die()
            raise AssertionError("unreachable")

        chain.send_raw_transaction = send_raw_transaction
    elif point == "receipt":
        real_advance = pipeline.following.advance

        def advance(payout: Any, broadcast: Any) -> Any:
            if payout.status == "BROADCAST":
                die()
            return real_advance(payout, broadcast)

        pipeline.following.advance = advance  # type: ignore[method-assign]
    else:
        raise SystemExit(f"unknown point {point}")
    while True:
        with database.connection_context():
            pipeline.run_pass()
        chain.mine()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
