"""The house rule "one write transaction per state change" (docs/development.md, Transactions),
enforced on the source: a bare ``database.atomic()`` outside ``write_transaction`` is a deferred
SQLite transaction, and one that reads before it writes fails at once with "database is locked"
when another process (a serving engine beside the CLI) committed in between (issue 26, item 4).

Every ``.atomic()`` (and peewee's ``.transaction()`` / ``.manual_commit()``) in appliance/ must
be a savepoint lexically inside a ``with write_transaction(...)`` of the same function, or be
listed in ALLOWED with the reason it is legitimate."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import appliance

SOURCE = Path(appliance.__file__).parent
TRANSACTION_METHODS = frozenset({"atomic", "transaction", "manual_commit"})

# (path under appliance/, enclosing function) -> why a transaction there is not a write_transaction.
ALLOWED: dict[tuple[str, str], str] = {
    ("common/db.py", "write_transaction"): "it is the write transaction itself (BEGIN IMMEDIATE on "
    "SQLite, under the process-wide write lock; a plain transaction on PostgreSQL)",
    ("common/db.py", "patient_write_transaction"): "the write transaction of the group commit's "
    "writer thread (the same, waiting for the lock without a bound: its callers bound their waits)",
    ("common/db.py", "savepoint"): "a savepoint, refused at run time outside a transaction (for "
    "helpers whose callers hold the write_transaction)",
    ("common/migrate.py", "apply_connected"): "a migration's DDL and its schema_migrations row in one "
    "transaction; one migrator at a time (an advisory lock on PostgreSQL; SQLite files are "
    "migrated before serving), and its first statement writes",
}


def _is_write_transaction(item: ast.withitem) -> bool:
    call = item.context_expr
    if not isinstance(call, ast.Call):
        return False
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in ("write_transaction", "patient_write_transaction")


class _Finder(ast.NodeVisitor):
    def __init__(self) -> None:
        self.functions: list[str] = []
        self.depth = 0  # how many `with write_transaction(...)` blocks enclose the current node
        self.found: list[tuple[int, str, bool]] = []  # line, function, inside a write_transaction

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:  # applied where written, in the enclosing scope
            self.visit(decorator)
        # A nested function runs when called, not where it is written: it starts outside.
        outer, self.depth = self.depth, 0
        self.functions.append(node.name)
        for statement in node.body:
            self.visit(statement)
        self.functions.pop()
        self.depth = outer

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def visit_With(self, node: ast.With) -> None:
        opens = any(_is_write_transaction(item) for item in node.items)
        for item in node.items:
            self.visit(item)
        self.depth += opens
        for statement in node.body:
            self.visit(statement)
        self.depth -= opens

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in TRANSACTION_METHODS:
            function = self.functions[-1] if self.functions else "<module>"
            self.found.append((node.lineno, function, self.depth > 0))
        self.generic_visit(node)


def transactions_outside_write_transaction(source: str, path: str) -> list[str]:
    finder = _Finder()
    finder.visit(ast.parse(source))
    return [
        f"{path}:{line} in {function}()"
        for line, function, inside in finder.found
        if not inside and (path, function) not in ALLOWED
    ]


def test_no_transaction_in_the_appliance_is_a_bare_atomic_outside_a_write_transaction() -> None:
    offences: list[str] = []
    scanned = 0
    for file in sorted(SOURCE.rglob("*.py")):
        relative = file.relative_to(SOURCE).as_posix()
        offences += transactions_outside_write_transaction(file.read_text(), relative)
        scanned += 1
    assert scanned > 100  # the whole package, not an empty glob
    assert not offences, "use write_transaction (appliance.common.db) for these: " + ", ".join(offences)


def test_every_allowed_exception_still_exists_and_has_a_reason() -> None:
    for (path, function), reason in ALLOWED.items():
        tree = ast.parse((SOURCE / path).read_text())
        names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
        assert function in names, f"{path}: {function}() is gone; remove it from ALLOWED"
        assert len(reason) > 20


def test_the_guard_refuses_a_bare_atomic_and_a_decorator() -> None:
    source = textwrap.dedent(
        """\
        def f():
            with database.atomic():
                pass
        @database.atomic()
        def g():
            pass
        """
    )
    assert transactions_outside_write_transaction(source, "x.py") == ["x.py:2 in f()", "x.py:4 in <module>()"]


def test_the_guard_accepts_a_savepoint_inside_a_write_transaction() -> None:
    source = textwrap.dedent(
        """\
        def f():
            with write_transaction(database):
                with contextlib.suppress(E), database.atomic():
                    pass
        """
    )
    assert transactions_outside_write_transaction(source, "x.py") == []


def test_the_guard_refuses_an_atomic_after_the_write_transaction_ended() -> None:
    source = textwrap.dedent(
        """\
        def f():
            with write_transaction(database):
                pass
            with database.atomic():
                pass
        """
    )
    assert transactions_outside_write_transaction(source, "x.py") == ["x.py:4 in f()"]


def test_the_guard_refuses_an_atomic_in_a_function_defined_inside_a_write_transaction() -> None:
    source = textwrap.dedent(
        """\
        def f():
            with write_transaction(database):
                def later():
                    with database.atomic():
                        pass
        """
    )
    assert transactions_outside_write_transaction(source, "x.py") == ["x.py:4 in later()"]
