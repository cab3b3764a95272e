"""The layers of the appliance, enforced on the source (issue 42): no module imports itself through
others (an import cycle), ``common/`` imports no service, and the chain adapters (``engine/chain/``)
and the outgoing lifecycle (``engine/outgoing/``) import nothing of the payouts or the sweeps that
use them, and payouts and sweeps nothing of each other.

Every import counts, the ones inside a function too (a lazy import is a dependency all the same:
it only moves the failure from import time to the first call), except those under
``if TYPE_CHECKING:``, which name types for the checker and run nothing. What still breaks a rule
is listed below as a known exception with its reason; an entry whose breach is gone fails the test
too, so that the list only shrinks."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterable
from pathlib import Path

import appliance

SOURCE = Path(appliance.__file__).parent

# Import cycles that remain, each as the sorted modules of the cycle -> why it is still there.
KNOWN_CYCLES: dict[tuple[str, ...], str] = {}

# (importing module, imported module) -> why the layer rule is broken there for now.
KNOWN_LAYER_BREACHES: dict[tuple[str, str], str] = {}

# (modules of this prefix, may not import modules of these prefixes)
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("appliance.common", ("appliance.dispatch", "appliance.engine", "appliance.cli", "appliance.serving")),
    ("appliance.engine.chain", ("appliance.engine.payouts", "appliance.engine.sweeps")),
    # The one lifecycle every outgoing transaction shares: what it pays plugs in (follow.Side).
    ("appliance.engine.outgoing", ("appliance.engine.payouts", "appliance.engine.sweeps")),
    # Payouts and sweeps share only what lies below them (outgoing/, chain/, ledger/).
    ("appliance.engine.payouts", ("appliance.engine.sweeps",)),
    ("appliance.engine.sweeps", ("appliance.engine.payouts",)),
]


def module_names(root: Path, package: str = "appliance") -> dict[str, Path]:
    """Every module under ``root`` by its dotted name (a package by its ``__init__.py``)."""
    modules = {}
    for file in root.rglob("*.py"):
        parts = [package, *file.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = file
    return modules


def _is_type_checking(node: ast.If) -> bool:
    return "TYPE_CHECKING" in ast.unparse(node.test)


def _resolve(name: str, known: set[str]) -> str | None:
    """The module ``name`` is or lies in (a class or function inside a module: the module)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def _imported_modules(
    node: ast.Import | ast.ImportFrom, module: str, is_package: bool, known: set[str]
) -> Iterable[str | None]:
    """The modules one import statement loads: ``from a.b import c`` is the module a.b.c when
    there is one, else a.b (a parent package runs too, but is not counted: every module is
    inside its package)."""
    if isinstance(node, ast.Import):
        yield from (_resolve(alias.name, known) for alias in node.names)
        return
    base = node.module or ""
    if node.level:  # relative: from the module's own package upwards
        package = module.split(".") if is_package else module.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join([*package, base] if base else package)
    for alias in node.names:
        name = f"{base}.{alias.name}"
        yield name if name in known else _resolve(base, known)


def imports_of(source: str, module: str, modules: Iterable[str], *, is_package: bool = False) -> set[str]:
    """The modules of ``modules`` that ``source`` (the module ``module``) imports, at any depth
    but under ``if TYPE_CHECKING:``."""
    known = set(modules)
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.update(
                target
                for target in _imported_modules(node, module, is_package, known)
                if target is not None and target != module
            )
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(source))
    return found


def import_graph(root: Path = SOURCE) -> dict[str, set[str]]:
    modules = module_names(root)
    return {
        name: imports_of(file.read_text(), name, modules, is_package=file.name == "__init__.py")
        for name, file in modules.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """The strongly connected sets of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[tuple[str, ...]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                connect(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            members = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                members.append(member)
                if member == node:
                    break
            if len(members) > 1:
                found.append(tuple(sorted(members)))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def layer_breaches(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    def within(name: str, prefix: str) -> bool:
        return name == prefix or name.startswith(prefix + ".")

    return {
        (module, imported)
        for module, imported_modules in graph.items()
        for layer, forbidden in LAYERS
        if within(module, layer)
        for imported in imported_modules
        if any(within(imported, prefix) for prefix in forbidden)
    }


# -- the appliance ----------------------------------------------------------------------------------


def test_no_module_of_the_appliance_imports_itself_through_others() -> None:
    graph = import_graph()
    assert len(graph) > 200 and sum(map(len, graph.values())) > 1000  # the whole package was read
    found = cycles(graph)
    unknown = [cycle for cycle in found if cycle not in KNOWN_CYCLES]
    assert not unknown, "import cycles: " + "; ".join(" <-> ".join(cycle) for cycle in unknown)
    gone = [cycle for cycle in KNOWN_CYCLES if cycle not in found]
    assert not gone, f"no longer a cycle, remove from KNOWN_CYCLES: {gone}"


def test_common_imports_no_service_and_the_chains_and_outgoing_nothing_of_payouts_or_sweeps() -> None:
    found = layer_breaches(import_graph())
    unknown = sorted(found - set(KNOWN_LAYER_BREACHES))
    assert not unknown, "layer breaches (module, what it imports): " + ", ".join(map(str, unknown))
    gone = sorted(set(KNOWN_LAYER_BREACHES) - found)
    assert not gone, f"no longer imported, remove from KNOWN_LAYER_BREACHES: {gone}"


def test_every_known_exception_gives_its_reason() -> None:
    for reason in [*KNOWN_CYCLES.values(), *KNOWN_LAYER_BREACHES.values()]:
        assert len(reason) > 40


# -- the checker itself, on a package written for it ------------------------------------------------


def _package(tmp_path: Path, files: dict[str, str]) -> dict[str, set[str]]:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return import_graph(tmp_path)


def test_the_checker_finds_a_cycle_made_by_an_import_inside_a_function(tmp_path: Path) -> None:
    graph = _package(
        tmp_path,
        {
            "__init__.py": "",
            "keys.py": "def load():\n    from appliance import key_file\n",
            "key_file.py": "from appliance.keys import load\n",
            "leaf.py": "import appliance.keys\n",
        },
    )
    assert graph["appliance.leaf"] == {"appliance.keys"}
    assert cycles(graph) == [("appliance.key_file", "appliance.keys")]


def test_the_checker_follows_relative_imports_and_names_inside_modules(tmp_path: Path) -> None:
    graph = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a/__init__.py": "from .b import thing\n",
            "a/b.py": "from ..c import other\n",
            "c.py": "from appliance.a import b\nfrom appliance.a.b import thing\n",
        },
    )
    assert graph["appliance.a"] == {"appliance.a.b"}
    assert graph["appliance.a.b"] == {"appliance.c"}
    assert graph["appliance.c"] == {"appliance.a.b"}  # `from appliance.a import b` is the module b
    assert cycles(graph) == [("appliance.a.b", "appliance.c")]


def test_the_checker_leaves_out_imports_for_the_type_checker_only(tmp_path: Path) -> None:
    graph = _package(
        tmp_path,
        {
            "__init__.py": "",
            "runtime.py": """\
                from typing import TYPE_CHECKING
                if TYPE_CHECKING:
                    from appliance.sender import S
                """,
            "sender.py": "from appliance.runtime import R\n",
        },
    )
    assert cycles(graph) == []


def test_the_checker_refuses_common_importing_a_service(tmp_path: Path) -> None:
    graph = _package(
        tmp_path,
        {
            "__init__.py": "",
            "common/__init__.py": "",
            "common/store.py": "def f():\n    from appliance.engine.models import Payout\n",
            "engine/__init__.py": "",
            "engine/models.py": "from appliance.common.store import f\n",
        },
    )
    assert layer_breaches(graph) == {("appliance.common.store", "appliance.engine.models")}
