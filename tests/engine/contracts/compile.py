"""Compile the test-only contracts beside this file (needs the vyper development dependency):
`python -m tests.engine.contracts.compile` rewrites each NAME.json from NAME.vy; a test checks
that the committed bytecode equals a fresh compile."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
CONTRACTS = ("fee_token", "permit_token")
EVM_VERSION = "cancun"


def compile_contract(name: str) -> dict[str, Any]:
    import vyper
    from vyper.compiler.settings import Settings

    out = vyper.compile_code(
        (HERE / f"{name}.vy").read_text(),
        output_formats=["abi", "bytecode"],
        settings=Settings(evm_version=EVM_VERSION),
    )
    return {
        "compiler": f"vyper {vyper.__version__}",
        "evmVersion": EVM_VERSION,
        "abi": out["abi"],
        "bytecode": out["bytecode"],
    }


def artifact(name: str) -> dict[str, Any]:
    return json.loads((HERE / f"{name}.json").read_text())  # type: ignore[no-any-return]


def main() -> int:
    for name in CONTRACTS:
        (HERE / f"{name}.json").write_text(json.dumps(compile_contract(name), indent=1) + "\n")
        print(f"compiled {name}.vy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
