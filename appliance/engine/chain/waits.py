"""What the embedded chain's miner asks the engine: does anything wait for blocks?

The miner (LocalChain.run_miner in ``serve``) mines only while this answers yes or transactions
wait in its pool, so an idle appliance's chain file does not grow. Yes means, on that chain:
- a payout or gas top-up broadcast not yet final (signed, sent, or mined below the asset's
  confirmations): it must reach the pool and then its confirmations;
- a deposit PENDING (below its asset's confirmations).
Both are read through their status indexes (broadcast.status; deposit (chain_id, status, ...)), one
query each per look: once a second while idle, once a block while mining for them.
"""

from __future__ import annotations

from collections.abc import Callable

from appliance.engine.db import database
from appliance.engine.models import Broadcast, Deposit
from appliance.engine.outgoing.state import UNFINISHED


def engine_waits(chain_id: str) -> Callable[[], bool]:
    def waits() -> bool:
        with database.connection_context():
            unfinished = (
                Broadcast.select(Broadcast.id)
                .where((Broadcast.status.in_(UNFINISHED)) & (Broadcast.chain_id == chain_id))
                .exists()
            )
            return unfinished or (
                Deposit.select(Deposit.id)
                .where((Deposit.chain_id == chain_id) & (Deposit.status == "PENDING"))
                .exists()
            )

    return waits
