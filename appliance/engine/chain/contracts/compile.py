"""Compile the embedded chain's contracts (development only: needs the vyper package)."""

from __future__ import annotations

import json
import sys
from typing import Any

from appliance.engine.chain.contracts import CONTRACTS, EVM_VERSION, HERE


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


def main() -> int:
    for name in CONTRACTS:
        (HERE / f"{name}.json").write_text(json.dumps(compile_contract(name), indent=1) + "\n")
        print(f"compiled {name}.vy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
