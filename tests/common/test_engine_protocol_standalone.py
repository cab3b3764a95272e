"""The reference client ships alone: it and the protocol module it shares with the server import
only the standard library, requests, and each other (and `cryptography`, the client only where it
signs an operator's payout instructions: issue 43)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import appliance.engine.client
import appliance.engine.protocol
from appliance.engine.auth import signature

ALLOWED = set(sys.stdlib_module_names) | {"requests", "__future__"}


def _imports(path: str) -> set[str]:
    tree = ast.parse(Path(path).read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_the_protocol_module_imports_only_the_standard_library() -> None:
    imported = _imports(appliance.engine.protocol.__file__)
    assert {name.split(".")[0] for name in imported} <= ALLOWED


def test_the_client_imports_only_the_standard_library_requests_and_the_protocol() -> None:
    imported = _imports(appliance.engine.client.__file__) - {"appliance.engine.protocol"}
    assert {name.split(".")[0] for name in imported} <= ALLOWED | {"cryptography"}


def test_the_server_checks_signatures_with_the_protocol_the_client_signs_with() -> None:
    assert signature.canonical_string is appliance.engine.client.canonical_string
    assert signature.sign_request is appliance.engine.client.sign
    assert "appliance.engine.client" not in _imports(signature.__file__)
