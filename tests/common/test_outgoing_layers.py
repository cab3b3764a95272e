"""The layers of the appliance, fenced on the source (issue 42), in the manner of
test_transaction_guard.py: every import in appliance/ (at module level or inside a function, since
a late import is a dependency all the same) is read with ``ast`` and checked against three rules:

- ``common/`` imports no service (appliance.engine, appliance.dispatch): the services build on it;
- the engine's ``chain/`` imports nothing of payouts or sweeps: it is the port every transaction
  of theirs goes through, not one of them;
- no two modules of the engine (or of common/) import each other, directly or around a longer
  cycle. (The dispatch service has one, through its runtime: its own engineers' to untie.)

Exceptions are listed by name with the reason they stand."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator
from pathlib import Path

import appliance

SOURCE = Path(appliance.__file__).parent
SERVICES = ("appliance.engine", "appliance.dispatch")
CHAIN_MUST_NOT_IMPORT = ("appliance.engine.payouts", "appliance.engine.sweeps")

# path under appliance/ -> why it may import a service for now.
COMMON_IMPORTS_A_SERVICE: dict[str, str] = {
    "common/backup.py": "moves to the application level with issue 42's last step",
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SOURCE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported(source: str, module: str, is_package: bool = False) -> Iterator[tuple[int, str]]:
    """(line, module name) of every import in ``source``; ``from x import y`` names x.y (a module
    y of package x, or a name of module x: the caller keeps what exists)."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            yield node.lineno, base
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def appliance_modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(SOURCE.rglob("*.py"))}


def dependencies(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Each module's imports of other appliance modules (package __init__ files left out: they
    hold no code that imports, and every submodule's import passes through them)."""
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = {
            target
            for _, target in imported(path.read_text(), name, path.name == "__init__.py")
            if target in modules and target != name and modules[target].name != "__init__.py"
        }
        graph[name] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def offending_imports(directory: str, forbidden: tuple[str, ...]) -> list[str]:
    out = []
    for path in sorted((SOURCE / directory).rglob("*.py")):
        relative = path.relative_to(SOURCE).as_posix()
        for line, target in imported(path.read_text(), module_name(path), path.name == "__init__.py"):
            if any(target == f or target.startswith(f + ".") for f in forbidden):
                out.append(f"{relative}:{line} imports {target}")
    return sorted(set(out))


def test_common_imports_no_service_but_the_named_exceptions() -> None:
    offences = [
        offence
        for offence in offending_imports("common", SERVICES)
        if offence.split(":")[0] not in COMMON_IMPORTS_A_SERVICE
    ]
    assert not offences, "common/ builds the services, never on them: " + ", ".join(offences)


def test_every_named_exception_still_imports_a_service_and_has_a_reason() -> None:
    for path, reason in COMMON_IMPORTS_A_SERVICE.items():
        assert any(o.startswith(path + ":") for o in offending_imports("common", SERVICES)), (
            f"{path} no longer imports a service: remove it from COMMON_IMPORTS_A_SERVICE"
        )
        assert len(reason) > 20


def test_the_chain_port_imports_nothing_of_payouts_or_sweeps() -> None:
    offences = offending_imports("engine/chain", CHAIN_MUST_NOT_IMPORT)
    assert not offences, "chain/ is below payouts and sweeps: " + ", ".join(offences)


FENCED_FOR_CYCLES = ("appliance.engine.", "appliance.common.")


def test_no_module_of_the_engine_or_common_is_part_of_an_import_cycle() -> None:
    modules = appliance_modules()
    assert len(modules) > 100  # the whole package, not an empty glob
    found = [c for c in cycles(dependencies(modules)) if any(m.startswith(FENCED_FOR_CYCLES) for m in c)]
    assert not found, "import cycles (one module must depend on the other, not both): " + "; ".join(
        " <-> ".join(component) for component in found
    )


def test_the_cycle_finder_sees_a_cycle_through_a_late_import() -> None:
    first = "import b\n"
    second = textwrap.dedent(
        """\
        def later():
            from a import x
        """
    )
    graph = {
        "a": {t for _, t in imported(first, "a")} & {"a", "b"},
        "b": {t for _, t in imported(second, "b")} & {"a", "b"},
    }
    assert cycles(graph) == [["a", "b"]]


def test_a_relative_import_is_read_as_the_module_it_names() -> None:
    names = {t for _, t in imported("from .state import transition\n", "appliance.engine.outgoing.follow")}
    assert "appliance.engine.outgoing.state" in names
