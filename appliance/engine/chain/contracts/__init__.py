"""Contracts of the embedded chain: Vyper source kept here, compiled bytecode committed beside it.

The compiler (vyper) is a development dependency only: `python -m appliance.engine.chain.contracts.compile`
rewrites the JSON files, and a test checks that the committed bytecode equals a fresh compile.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
EVM_VERSION = "cancun"  # the fork the embedded chain runs (appliance.engine.chain.local)
CONTRACTS = ("usdc",)


@cache
def artifact(name: str) -> dict[str, Any]:
    """{"compiler", "evmVersion", "abi", "bytecode"} of a committed contract."""
    return json.loads((HERE / f"{name}.json").read_text())
