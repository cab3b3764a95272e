"""Queries whose SQL text is built once.

Peewee builds the text of a query on every execution: a join of four tables costs about 170 calls
of its SQL generator, which on the hottest paths (the authenticated guard, the tracking view) cost
more than running the query. A compiled query is written with the same builder, with ``Slot``s
where the values go; its text and parameter template are built the first time it runs on a kind
of database (SQLite and PostgreSQL differ in parameter marks) and only the values are bound after
that. Rows come back through the query's own cursor wrapper, as model instances (joins included),
tuples or dicts, exactly as the query would have given them.

    by_id = CompiledSelect(lambda: User.select().where(User.id == Slot("id")).limit(1))
    user = by_id.first(database, id=7)
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import peewee


class Slot(peewee.Node):
    """A named parameter of a compiled query. ``field`` converts the bound value to its stored
    form (as peewee does for a literal compared with that field)."""

    def __init__(self, name: str, field: peewee.Field | None = None) -> None:
        self.name = name
        self.field = field

    def bind(self, values: dict[str, Any]) -> Any:
        value = values[self.name]
        return self.field.db_value(value) if self.field is not None else value

    def __sql__(self, ctx: peewee.Context) -> peewee.Context:
        # The parameter itself stands in the parameter list (peewee's own ``value`` would apply the
        # surrounding field's converter to it); ``run`` swaps it for the bound value.
        ctx._values.append(self)
        return ctx.literal(ctx.state.param or "?")


# What a cursor wrapper holds for one run (everything else it holds comes from initialize()).
_WRAPPER_OWN = frozenset({"cursor", "count", "index", "initialized", "populated", "row_cache"})


class CompiledSelect:
    """A SELECT written once with ``Slot``s, run many times with values."""

    def __init__(self, build: Callable[[], peewee.SelectBase]) -> None:
        self._build = build
        self._compiled: dict[type, tuple[peewee.SelectBase, str, list[Any]]] = {}
        self._row_state: dict[type, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def _for(self, database: peewee.Database) -> tuple[peewee.SelectBase, str, list[Any]]:
        kind = type(database)
        compiled = self._compiled.get(kind)
        if compiled is None:
            with self._lock:
                query = self._build()
                sql, params = database.get_sql_context().sql(query).query()
                compiled = self._compiled.setdefault(kind, (query, sql, list(params)))
        return compiled

    def _execute(self, database: peewee.Database | peewee.DatabaseProxy, values: dict[str, Any]) -> Any:
        real = database.obj if isinstance(database, peewee.DatabaseProxy) else database
        query, sql, template = self._for(real)
        params = [p.bind(values) if isinstance(p, Slot) else p for p in template]
        return query, real.execute_sql(sql, params)

    def run(self, database: peewee.Database | peewee.DatabaseProxy, **values: Any) -> Iterator[Any]:
        query, cursor = self._execute(database, values)
        wrapper = query._get_cursor_wrapper(cursor)
        kind = type(database.obj if isinstance(database, peewee.DatabaseProxy) else database)
        state = self._row_state.get(kind)
        if state is None:
            return self._learning_row_state(kind, wrapper)
        # The wrapper's column set-up (names, converters, join constructors) is the same on every
        # run of the same text: it is worked out on the first run only.
        wrapper.__dict__.update(state)
        wrapper.initialized = True
        return iter(wrapper)

    def _learning_row_state(self, kind: type, wrapper: Any) -> Iterator[Any]:
        for row in wrapper:
            if kind not in self._row_state and wrapper.initialized:
                self._row_state[kind] = {
                    name: value for name, value in vars(wrapper).items() if name not in _WRAPPER_OWN
                }
            yield row

    def raw_rows(
        self, database: peewee.Database | peewee.DatabaseProxy, **values: Any
    ) -> list[tuple[Any, ...]]:
        """The rows as the database driver gives them, without the fields' conversions (for
        listings that format stored values directly)."""
        _query, cursor = self._execute(database, values)
        return cursor.fetchall()

    def first_instances(
        self,
        database: peewee.Database | peewee.DatabaseProxy,
        models: tuple[type[peewee.Model], ...],
        **values: Any,
    ) -> tuple[Any, ...] | None:
        """The first row as one saved instance per model, for a query that selects each model's
        fields in ``sorted_fields`` order, one model after another (``select(A, B, C)`` over
        joins). Each value goes through its field's conversion, as peewee's own rows would; what
        is left out is peewee's per-row set-up, which costs three times the query on the
        authenticated guard. Foreign keys between the models are not linked: the caller does
        that where it needs them."""
        rows = self.raw_rows(database, **values)
        if not rows:
            return None
        row, start, built = rows[0], 0, []
        for model in models:
            names, conversions = _columns_of(model)
            end = start + len(names)
            data = dict(zip(names, row[start:end], strict=True))
            for name, convert in conversions:
                value = data[name]
                if value is not None:
                    data[name] = convert(value)
            instance: Any = object.__new__(model)  # as peewee builds a row: no __init__, no defaults
            instance.__data__ = data
            instance._dirty = set()
            instance.__rel__ = {}
            built.append(instance)
            start = end
        if start != len(row):
            raise ValueError(f"the query selects {len(row)} columns, the models {start}")
        return tuple(built)

    def first(self, database: peewee.Database | peewee.DatabaseProxy, **values: Any) -> Any:
        return next(self.run(database, **values), None)

    def all(self, database: peewee.Database | peewee.DatabaseProxy, **values: Any) -> list[Any]:
        return list(self.run(database, **values))


# Fields whose values come from both drivers already as Python wants them (str, int, float).
_AS_STORED = (peewee.CharField, peewee.TextField, peewee.IntegerField, peewee.FloatField)
_COLUMNS: dict[type, tuple[tuple[str, ...], tuple[tuple[str, Callable[[Any], Any]], ...]]] = {}


def _columns_of(
    model: type[peewee.Model],
) -> tuple[tuple[str, ...], tuple[tuple[str, Callable[[Any], Any]], ...]]:
    """The field names in ``sorted_fields`` order, and (name, conversion) of the fields whose
    stored values need one; worked out once per model."""
    columns = _COLUMNS.get(model)
    if columns is None:
        names, conversions = [], []
        for field in model._meta.sorted_fields:  # type: ignore[attr-defined]
            names.append(field.name)
            target = field.rel_field if isinstance(field, peewee.ForeignKeyField) else field
            if not isinstance(target, _AS_STORED):
                conversions.append((field.name, field.python_value))
        columns = _COLUMNS[model] = (tuple(names), tuple(conversions))
    return columns


def by_primary_key(model: type[peewee.Model]) -> CompiledSelect:
    """``model`` by its primary key, compiled: ``by_primary_key(Order).first(db, key=7)``."""
    return CompiledSelect(
        lambda: model.select().where(model._meta.primary_key == Slot("key")).limit(1)  # type: ignore[attr-defined]
    )


class PreparedInsert:
    """An INSERT with its text built and its values bound, to run later: a write transaction that
    holds the write lock (the group commit's batch) only executes it. ``set`` rebinds one field
    (a key known only once an earlier insert of the same transaction ran)."""

    __slots__ = ("_assigns_key", "_compiled", "_database", "_params", "instance", "keep_existing")

    def __init__(
        self,
        instance: peewee.Model,
        database: peewee.Database,
        compiled: _CompiledInsert | None,
        *,
        keep_existing: bool,
    ) -> None:
        self.instance = instance
        self.keep_existing = keep_existing
        self._database = database
        self._compiled = compiled
        meta = type(instance)._meta  # type: ignore[attr-defined]
        self._assigns_key = meta.primary_key is not False and instance._pk is None
        data = instance.__data__
        self._params = (
            [p.bind(data) if isinstance(p, Slot) else p for p in compiled.template]
            if compiled is not None
            else []
        )

    def set(self, name: str, value: Any) -> None:
        setattr(self.instance, name, value)
        if self._compiled is not None:
            data = self.instance.__data__
            for position in self._compiled.positions[name]:
                slot = self._compiled.template[position]
                self._params[position] = slot.bind(data)

    def run(self) -> bool:
        """Execute it (inside the caller's transaction); False when ``keep_existing`` and a row with
        the same unique key exists (nothing written). Runs again after a rollback as the first time."""
        instance, compiled = self.instance, self._compiled
        if compiled is None:  # a default left to peewee: it inserts the instance itself
            instance.save(force_insert=True)
            return True
        cursor = self._database.execute_sql(compiled.sql, self._params)
        if self.keep_existing and cursor.rowcount != 1:
            return False
        if self._assigns_key:
            if compiled.query._returning:  # PostgreSQL: INSERT … RETURNING the key
                row = cursor.fetchone()
                instance._pk = row[0] if row else None
            else:
                instance._pk = self._database.last_insert_id(cursor, compiled.query._query_type)
        instance._dirty.clear()
        return True


class _CompiledInsert:
    __slots__ = ("positions", "query", "sql", "template")

    def __init__(self, query: peewee.Insert, sql: str, template: list[Any]) -> None:
        self.query, self.sql, self.template = query, sql, template
        self.positions: dict[str, list[int]] = {}
        for position, param in enumerate(template):
            if isinstance(param, Slot):
                self.positions.setdefault(param.name, []).append(position)


class _Inserts:
    """INSERT texts by (model, fields given, kind of database)."""

    def __init__(self) -> None:
        # None: the fields given leave a default to peewee (the instance saves itself).
        self._compiled: dict[tuple[Any, ...], _CompiledInsert | None] = {}
        self._lock = threading.Lock()

    def insert(self, instance: peewee.Model) -> None:
        """INSERT a new row for ``instance`` (as ``instance.save(force_insert=True)`` would) and
        set its primary key, with the statement's text built once per set of fields given."""
        self.prepare(instance).run()

    def insert_if_new(self, instance: peewee.Model) -> bool:
        """INSERT ``instance`` unless a row with the same unique key exists (then nothing is
        written and no error spoils the transaction, so no savepoint is needed); True if it was
        inserted. The model's fields must all be given (no defaults)."""
        return self.prepare(instance, keep_existing=True).run()

    def prepare(self, instance: peewee.Model, *, keep_existing: bool = False) -> PreparedInsert:
        """``insert`` (or with ``keep_existing``, ``insert_if_new``) of ``instance`` as it is now,
        to run later."""
        model = type(instance)
        meta = model._meta  # type: ignore[attr-defined]
        data = instance.__data__
        names = tuple(name for name in meta.sorted_field_names if name in data)
        database = meta.database
        real = database.obj if isinstance(database, peewee.DatabaseProxy) else database
        key = (model, names, type(real), keep_existing)
        try:
            compiled = self._compiled[key]
        except KeyError:
            compiled = self._compile(model, names, real, keep_existing, key)
        return PreparedInsert(instance, real, compiled, keep_existing=keep_existing)

    def _compile(
        self,
        model: type[peewee.Model],
        names: tuple[str, ...],
        real: peewee.Database,
        keep_existing: bool,
        key: Any,
    ) -> _CompiledInsert | None:
        meta = model._meta  # type: ignore[attr-defined]
        with self._lock:
            if not meta.defaults.keys() <= {meta.fields[name] for name in names}:
                # A default left to peewee would be fixed in the text when it is built: no shortcut.
                if keep_existing:
                    raise ValueError(f"insert_if_new needs every field of {model.__name__} given")
                return self._compiled.setdefault(key, None)
            query = model.insert({meta.fields[name]: Slot(name, meta.fields[name]) for name in names})
            if keep_existing:  # INSERT OR IGNORE on SQLite, ON CONFLICT DO NOTHING on PostgreSQL
                query = query.on_conflict_ignore()
            sql, params = real.get_sql_context().sql(query).query()
            return self._compiled.setdefault(key, _CompiledInsert(query, sql, list(params)))


_INSERTS = _Inserts()
insert_new = _INSERTS.insert
insert_if_new = _INSERTS.insert_if_new
prepare_insert = _INSERTS.prepare
