"""Thin routes: one decorator binds a view to its schemas, and the same schemas make the OpenAPI.

``endpoint`` validates the path, query and JSON body with pydantic before the view runs, runs the
route's guard (authentication and role), and records what it knows for ``build_openapi``, which
walks the Flask URL map. Views receive plain values (``body=``, ``query=``) and return a dict or
list (serialised as JSON with the declared status), ``(value, status)``, or a Response.

Validation failures are Problems with one entry per field, under one rule (docs/errors.md):

- 400 when the request is invalid as the operation's input: no body where one is required, a
  body that is not JSON, a value of the wrong JSON type, a required field missing, a value that is
  not one of those allowed or does not match its pattern, a NUL character; and any invalid path or
  query parameter (the dispatch specification: "400 invalid date or limit" on GET /orders).
  Also a value outside its field's own limits: a text's length, a number's range ("400 invalid
  input"; GET /orders: "400 invalid date or limit"; PATCH /courier/me: "400 ... invalid language").
- The app's *unprocessable status* when every field reads fine but the request cannot be processed:
  a point outside the service area, a list with more or fewer items than it allows (a GPS batch,
  a plan's routes and stops, a route's points). The dispatch service answers 422 ("422 validation
  (bounds, duplicates, wrong delivery code)", "422 bounds or batch limit", "422 coordinate
  bounds"), as its services do for duplicates, wrong codes and the like; the engine answers 400
  (its specification: "a malformed value is a 400", and it names no 422). A request with both
  kinds of finding answers 400.

The OpenAPI document lists exactly these: 400 where the operation reads a body, query or path
model, and the unprocessable status where its body schema has an item count or a service-area
coordinate (marked ``x-unprocessable``).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import re
from collections.abc import Callable, Iterable, Mapping
from http import HTTPStatus
from typing import Annotated, Any, Protocol

from flask import Blueprint, Flask, Response, current_app, request
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from appliance.common.jsonio import dumps_bytes
from appliance.common.problems import ApiError, BadRequest, Invalid, UnsupportedMediaType

# pydantic's error types for a request that reads fine, field by field, but that the service cannot
# process: a point outside the service area, a list (a GPS batch, a plan's routes or stops, a route's
# points) with more or fewer items than it allows. Every other type (missing, wrong type, not
# allowed, no match, a text's length or a number's range) means the input itself is invalid: 400.
UNPROCESSABLE_ERROR_TYPES = frozenset({"service_area", "too_short", "too_long", "unprocessable"})

# The keywords by which a JSON schema states what UNPROCESSABLE_ERROR_TYPES report.
_UNPROCESSABLE_KEYWORDS = frozenset({"minItems", "maxItems", "x-unprocessable"})

# Database keys are signed 64-bit integers: an id beyond cannot name a record, and the database
# driver would raise on it (SQLite: OverflowError) rather than find nothing.
ID_MAX = 2**63 - 1
# An integer id in a body or query: beyond ID_MAX it is invalid input (400), never sent to a store.
Id = Annotated[int, Field(ge=1, le=ID_MAX)]

# One line of text a person types: a name, a label, an address, a phone. Such values end up in
# mail headers (a company's name in a subject), CSV and workbook cells and log lines, where a
# control character (C0, DEL, C1) or a line or paragraph separator would start a new header, row
# or line: they are refused (400, a pattern the OpenAPI document states). Added to a text field's
# own constraints: ``Annotated[str, StringConstraints(max_length=…), ONE_LINE]``.
ONE_LINE_PATTERN = r"^[^\x00-\x1f\x7f-\x9f\u2028\u2029]*$"
ONE_LINE = StringConstraints(pattern=ONE_LINE_PATTERN)


def is_one_line(text: str) -> bool:
    """``text`` passes ONE_LINE (for values that reach the service without a schema: the CLI)."""
    return re.fullmatch(ONE_LINE_PATTERN, text) is not None


# The app config key holding the status of an unprocessable body (422 unless the app says).
UNPROCESSABLE_STATUS_KEY = "APPLIANCE_UNPROCESSABLE_STATUS"


def unprocessable_status() -> int:
    return int(current_app.config.get(UNPROCESSABLE_STATUS_KEY, 422))


def _refuse_nul(where: str) -> None:
    """A NUL character in any text is refused at validation on every backend: PostgreSQL cannot
    store one (a 500 there) and SQLite would keep it silently. No text field allows one, so the
    value is malformed: 400."""
    raise BadRequest(
        f"Invalid {where}: text may not contain NUL characters.",
        errors=[{"field": where, "message": "NUL character"}],
    )


def _nul_path(value: Any, path: str = "") -> str | None:
    """Where a NUL character hides in parsed input (keys included), or None."""
    if isinstance(value, str):
        return path or "body" if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if "\x00" in str(key):
                return where
            found = _nul_path(item, where)
            if found:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _nul_path(item, f"{path}.{index}" if path else str(index))
            if found:
                return found
    return None


class Schema(BaseModel):
    """Request bodies: strict JSON types (a number is never accepted for a string, nor the reverse),
    unknown fields ignored. A NUL character anywhere is refused before the model runs (_read_body)."""

    model_config = ConfigDict(strict=True, extra="ignore", populate_by_name=True)


class QuerySchema(BaseModel):
    """Query strings arrive as text, so their numbers are converted (still range-checked)."""

    model_config = ConfigDict(strict=False, extra="ignore", populate_by_name=True)


class Guard(Protocol):
    """Who may call a route. ``check`` raises an ApiError or returns nothing."""

    @property
    def security(self) -> list[dict[str, list[str]]]: ...

    @property
    def description(self) -> str: ...

    def check(self) -> None: ...


@dataclasses.dataclass(frozen=True)
class Operation:
    method: str
    body: type[BaseModel] | None
    query: type[BaseModel] | None
    path: type[BaseModel] | None
    status: int
    response: type[BaseModel] | None
    response_description: str
    errors: tuple[int, ...]
    error_notes: dict[int, str]
    other_statuses: tuple[int, ...]
    guard: Guard | None
    summary: str
    description: str
    tags: tuple[str, ...]
    body_required: bool
    response_content_type: str


def _field_path(loc: Iterable[Any]) -> str:
    return ".".join(str(part) for part in loc if part not in {"body", "query", "path"})


def validation_error(
    exc: ValidationError, *, unprocessable_status: int = 400, where: str = "body"
) -> ApiError:
    """The Problem of a failed validation: ``unprocessable_status`` when every finding is of an
    UNPROCESSABLE_ERROR_TYPES type, 400 when anything is invalid in itself."""
    errors = [
        {"field": _field_path(err["loc"]) or where, "message": err["msg"], "type": err["type"]}
        for err in exc.errors(include_url=False, include_context=False, include_input=False)
    ]
    if any(err["type"] == "json_invalid" for err in errors):
        return BadRequest(
            "The request body is not valid JSON.", errors=[{"field": where, "message": "malformed JSON"}]
        )
    names = ", ".join(sorted({e["field"] for e in errors}))
    detail = f"Invalid {where}: {names}."
    if unprocessable_status == 422 and all(err["type"] in UNPROCESSABLE_ERROR_TYPES for err in errors):
        return Invalid(detail, errors=errors)
    return BadRequest(detail, errors=errors)


def _read_body(model: type[BaseModel], op: Operation) -> BaseModel:
    raw = request.get_data(cache=True)
    if not raw.strip():
        if op.body_required:
            raise BadRequest(
                "A JSON request body is required.", errors=[{"field": "body", "message": "required"}]
            )
        raw = b"{}"
    elif request.mimetype != "application/json":
        raise UnsupportedMediaType("Send the request body as application/json.")
    if b"\\u0000" in raw:  # JSON can carry a NUL only escaped; look closer only then (cheap)
        try:
            where = _nul_path(json.loads(raw))
        except (ValueError, RecursionError):
            where = None  # malformed or too deeply nested JSON: the model's own error says so (400)
        if where:
            _refuse_nul(where)
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        raise validation_error(exc, unprocessable_status=unprocessable_status()) from None


def _read_query(model: type[BaseModel], op: Operation) -> BaseModel:
    for key, value in request.args.items(multi=True):
        if "\x00" in key or "\x00" in value:
            _refuse_nul(f"query.{key}")
    values: dict[str, Any] = {}
    for key in request.args:
        items = request.args.getlist(key)
        field = model.model_fields.get(key)
        is_list = field is not None and getattr(field.annotation, "__origin__", None) is list
        values[key] = items if is_list or len(items) > 1 else items[0]
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        raise validation_error(exc, where="query") from None


def endpoint(
    bp: Blueprint | Flask,
    method: str,
    rule: str,
    *,
    body: type[BaseModel] | None = None,
    query: type[BaseModel] | None = None,
    path: type[BaseModel] | None = None,
    status: int = 200,
    response: type[BaseModel] | None = None,
    response_description: str = "",
    response_content_type: str = "application/json",
    errors: Iterable[int] = (),
    error_notes: Mapping[int, str] | None = None,
    other_statuses: Iterable[int] = (),
    guard: Guard | None = None,
    auth_first: bool = True,
    summary: str = "",
    tags: Iterable[str] = (),
    body_required: bool = True,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a view on ``bp`` for ``method rule`` with validation, guard and OpenAPI data.

    ``path`` validates the path parameters (patterns) before anything else reaches a store.
    ``other_statuses`` are further success statuses answered with the same body (a replayed
    submission's 200 beside the 201 of a new one); ``error_notes`` describe an error status beyond
    its phrase (extension members of its Problem).
    ``auth_first`` runs the guard before validation (both services: 401 before 400, so that a
    caller who is not authenticated learns nothing about the request's shape); False runs it
    after the path, query and body are validated.
    """

    def decorate(view: Callable[..., Any]) -> Callable[..., Any]:
        doc = inspect.cleandoc(view.__doc__ or "")  # multi-line docstrings lose their indent
        op = Operation(
            method=method.upper(),
            body=body,
            query=query,
            path=path,
            status=status,
            response=response,
            response_description=response_description,
            errors=tuple(errors),
            error_notes=dict(error_notes or {}),
            other_statuses=tuple(other_statuses),
            guard=guard,
            summary=summary or (doc.splitlines()[0] if doc else view.__name__.replace("_", " ")),
            description=doc,
            tags=tuple(tags),
            body_required=body_required,
            response_content_type=response_content_type,
        )

        @functools.wraps(view)
        def wrapper(**path_args: Any) -> Any:
            if guard is not None and auth_first:
                guard.check()
            kwargs = dict(path_args)
            if path is not None:
                try:
                    path.model_validate(path_args)
                except ValidationError as exc:
                    raise validation_error(exc, where="path") from None
            if query is not None:
                kwargs["query"] = _read_query(query, op)
            if body is not None:
                kwargs["body"] = _read_body(body, op)
            if guard is not None and not auth_first:
                guard.check()
            result = view(**kwargs)
            return _to_response(result, status)

        wrapper._operation = op  # type: ignore[attr-defined]
        bp.add_url_rule(rule, endpoint=view.__name__, view_func=wrapper, methods=[method.upper()])
        return wrapper

    return decorate


def _to_response(result: Any, status: int) -> Response:
    if isinstance(result, Response):
        return result
    if isinstance(result, tuple):
        value, status = result
    else:
        value = result
    if value is None:
        return Response(status=status)
    # As jsonify would, with the status given at once (setting it afterwards parses it again).
    return Response(dumps_bytes(value), status=status, mimetype="application/json")


# ---------------------------------------------------------------------------------------------
# OpenAPI

_PATH_PARAM = re.compile(r"<(?:(\w+):)?(\w+)>")


def _openapi_path(rule: str) -> tuple[str, list[dict[str, Any]]]:
    params = []
    for converter, name in _PATH_PARAM.findall(rule):
        schema: dict[str, Any] = (
            {"type": "integer", "minimum": 0, "maximum": 2**63 - 1}
            if converter == "int"
            else {"type": "string"}
        )
        params.append({"name": name, "in": "path", "required": True, "schema": schema})
    return _PATH_PARAM.sub(lambda m: "{" + m.group(2) + "}", rule), params


def build_openapi(
    app: Flask,
    *,
    title: str,
    version: str,
    description: str,
    problem_schema: dict[str, Any],
    security_schemes: dict[str, Any],
    extra_schemas: Iterable[type[BaseModel]] = (),
) -> dict[str, Any]:
    """The OpenAPI 3.1 document of every route registered through ``endpoint``."""
    operations = _registered_operations(app)
    refs, schemas = _component_schemas(operations, extra_schemas)
    schemas["Problem"] = problem_schema
    answers = _Answers(refs, schemas, int(app.config.get(UNPROCESSABLE_STATUS_KEY, 422)))
    paths: dict[str, dict[str, Any]] = {}
    for rule_text, op in sorted(operations, key=lambda item: item[0]):
        path, entry = _path_item_operation(rule_text, op, answers)
        paths.setdefault(path, {})[op.method.lower()] = entry
    return {
        "openapi": "3.1.0",
        "info": {"title": title, "version": version, "description": description},
        "paths": paths,
        "components": {"schemas": schemas, "securitySchemes": security_schemes},
    }


# A model's reference in the document, by (model, mode): "validation" for request bodies,
# "serialization" for answers (pydantic's two JSON schemas of one model differ).
SchemaRefs = dict[tuple[Any, JsonSchemaMode], Any]


def _registered_operations(app: Flask) -> list[tuple[str, Operation]]:
    """(rule, Operation) of every view that ``endpoint`` registered, in the URL map's order."""
    operations: list[tuple[str, Operation]] = []
    for rule in app.url_map.iter_rules():
        view = app.view_functions.get(rule.endpoint)
        op = getattr(view, "_operation", None)
        if op is not None:
            operations.append((rule.rule, op))
    return operations


def _component_schemas(
    operations: list[tuple[str, Operation]], extra_schemas: Iterable[type[BaseModel]]
) -> tuple[SchemaRefs, dict[str, Any]]:
    """The references of every body and answer model, and the schemas they point to, all built
    in one pass so that a model used in several places is defined once."""
    models: list[tuple[type[BaseModel] | None, JsonSchemaMode]] = []
    for _, op in operations:
        models.append((op.body, "validation"))
        models.append((op.response, "serialization"))
    models.extend((model, "serialization") for model in extra_schemas)
    wanted = list(dict.fromkeys((model, mode) for model, mode in models if model is not None))
    refs, defs = models_json_schema(wanted, ref_template="#/components/schemas/{model}")
    return refs, dict(defs.get("$defs", {}))


@dataclasses.dataclass(frozen=True)
class _Answers:
    """What the responses of an operation are built from: the model references, the component
    schemas they point to, and the app's status for an unprocessable body."""

    refs: SchemaRefs
    schemas: dict[str, Any]
    unprocessable_status: int

    def may_be_unprocessable(self, schema: Any, seen: frozenset[str] = frozenset()) -> bool:
        """Whether a JSON schema (references followed) holds anywhere a limit whose breach is
        unprocessable (an item count, the service area)."""
        if isinstance(schema, list):
            return any(self.may_be_unprocessable(item, seen) for item in schema)
        if not isinstance(schema, dict):
            return False
        ref = schema.get("$ref")
        if isinstance(ref, str):
            name = ref.rsplit("/", 1)[-1]
            if name not in seen and self.may_be_unprocessable(self.schemas.get(name), seen | {name}):
                return True
        if _UNPROCESSABLE_KEYWORDS & schema.keys():
            return True
        return any(
            self.may_be_unprocessable(value, seen)
            for key, value in schema.items()
            if key not in {"$ref", "examples", "default", "const", "enum", "example"}
        )


def _path_item_operation(rule_text: str, op: Operation, answers: _Answers) -> tuple[str, dict[str, Any]]:
    """The OpenAPI path of a Flask rule and the operation object of one method on it."""
    path, params = _parameters(rule_text, op)
    entry: dict[str, Any] = {"summary": op.summary, "operationId": f"{op.method.lower()}{path}"}
    if op.description and op.description != op.summary:
        entry["description"] = op.description
    if op.tags:
        entry["tags"] = list(op.tags)
    if params:
        entry["parameters"] = params
    if op.body is not None:
        entry["requestBody"] = {
            "required": op.body_required,
            "content": {"application/json": {"schema": answers.refs[(op.body, "validation")]}},
        }
    entry["responses"] = _responses(op, answers)
    if op.guard is None:
        entry["security"] = []
        return path, entry
    entry["security"] = op.guard.security
    if op.guard.description:
        entry["description"] = (entry.get("description", "") + "\n\nAccess: " + op.guard.description).strip()
    return path, entry


def _parameters(rule_text: str, op: Operation) -> tuple[str, list[dict[str, Any]]]:
    """The path (in OpenAPI's braces) and its parameters: the path's, typed by the route's path
    model where it has one, then the query model's."""
    path, params = _openapi_path(rule_text)
    if op.path is not None:
        path_props = op.path.model_json_schema().get("properties", {})
        for param in params:
            if param["name"] in path_props:
                param["schema"] = path_props[param["name"]]
    if op.query is not None:
        query_schema = op.query.model_json_schema()
        required = set(query_schema.get("required", []))
        for name, prop in query_schema.get("properties", {}).items():
            params.append({"name": name, "in": "query", "required": name in required, "schema": prop})
    return path, params


def _responses(op: Operation, answers: _Answers) -> dict[str, Any]:
    """The success answer, then every Problem the route may give: its declared errors, the
    validation statuses where it reads input (module docstring), and its guard's refusals."""
    success: dict[str, Any] = {"description": op.response_description or "Success"}
    if op.response is not None:
        schema = answers.refs[(op.response, "serialization")]
        success["content"] = {op.response_content_type: {"schema": schema}}
    elif op.status != 204 and op.response_content_type != "application/json":
        success["content"] = {op.response_content_type: {"schema": {"type": "string"}}}
    responses: dict[str, Any] = {str(op.status): success}
    for other in op.other_statuses:
        responses[str(other)] = success
    problem = {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
    codes = set(op.errors)
    if op.body is not None or op.query is not None or op.path is not None:
        codes.add(400)
    if op.body is not None:
        codes.update((413, 415))  # a body over the app's size limit; a body that is not JSON
        if answers.may_be_unprocessable(answers.refs[(op.body, "validation")]):
            codes.add(answers.unprocessable_status)
    if op.guard is not None:
        codes.update(getattr(op.guard, "error_statuses", (401,)))
    for code in sorted(codes):
        description = _status_phrase(code)
        if code in op.error_notes:
            description += ": " + op.error_notes[code]
        responses[str(code)] = {"description": description, "content": problem}
    return responses


def _status_phrase(code: int) -> str:
    try:
        return HTTPStatus(code).phrase
    except ValueError:
        return str(code)
