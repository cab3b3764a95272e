"""Compile the test contracts of tests/engine/contracts (needs the vyper package, a development
dependency): `python -m tests.engine.contracts.compile` rewrites the JSON files beside the sources;
tests/engine/test_treasury_flows.py checks that the committed bytecode equals a fresh compile."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
CONTRACTS = ("permit_token",)
EVM_VERSION = "cancun"


def compile_contract(name: str) -> dict[str, Any]:
    import vyper
    from vyper.compiler.settings import Settings

    source = (HERE / f"{name}.vy").read_text()
    out = vyper.compile_code(
        source, output_formats=["abi", "bytecode"], settings=Settings(evm_version=EVM_VERSION)
    )
    return {
        "compiler": f"vyper {vyper.__version__}",
        "evmVersion": EVM_VERSION,
        "abi": out["abi"],
        "bytecode": out["bytecode"],
    }


def artifact(name: str) -> dict[str, Any]:
    return json.loads((HERE / f"{name}.json").read_text())


def main() -> int:
    for name in CONTRACTS:
        (HERE / f"{name}.json").write_text(json.dumps(compile_contract(name), indent=1) + "\n")
        print(f"compiled {name}.vy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
