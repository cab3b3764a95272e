"""The shared API layer: validation, Problems for every failure, request ids, OpenAPI."""

from typing import Annotated

import peewee
import pytest
from flask import Blueprint
from pydantic import Field

from appliance.common.api import Schema, build_openapi, endpoint
from appliance.common.problems import Conflict
from appliance.common.webapp import create_base_app
from appliance.dispatch import problems as dispatch_problems
from appliance.engine import problems as engine_problems


class Thing(Schema):
    name: Annotated[str, Field(min_length=2, max_length=5)]
    count: int = 0


def _app(render):
    proxy = peewee.DatabaseProxy()
    proxy.initialize(peewee.SqliteDatabase(":memory:"))
    app = create_base_app("trial", render_problem=render, database=proxy)
    bp = Blueprint("trial", __name__)

    @endpoint(bp, "POST", "/things", body=Thing, status=201)
    def create_thing(body: Thing):
        return {"name": body.name, "count": body.count}

    @endpoint(bp, "POST", "/conflict")
    def conflict():
        raise Conflict("Already there.", code="already_member")

    @endpoint(bp, "GET", "/boom")
    def boom():
        raise RuntimeError("unexpected")

    app.register_blueprint(bp)
    return app.test_client()


@pytest.fixture
def client():
    return _app(dispatch_problems.render)


def test_a_valid_body_reaches_the_view(client) -> None:
    response = client.post("/things", json={"name": "abc", "count": 2})
    assert response.status_code == 201
    assert response.json == {"name": "abc", "count": 2}


def test_malformed_json_is_a_problem_400(client) -> None:
    response = client.post("/things", data="{nope", content_type="application/json")
    assert response.status_code == 400
    assert response.mimetype == "application/problem+json"
    assert set(response.json) >= {"type", "title", "status"}


def test_a_body_of_another_content_type_is_a_problem_415(client) -> None:
    response = client.post("/things", data="name=abc", content_type="application/x-www-form-urlencoded")
    assert response.status_code == 415
    assert response.json["status"] == 415


def test_a_field_of_the_wrong_type_names_the_field(client) -> None:
    response = client.post("/things", json={"name": "abc", "count": "2"})
    assert response.status_code == 400
    assert response.json["errors"][0]["field"] == "count"


def test_a_too_long_string_is_refused(client) -> None:
    assert client.post("/things", json={"name": "abcdef"}).status_code == 400


def test_a_missing_body_is_refused(client) -> None:
    assert client.post("/things").status_code == 400


def test_unknown_routes_and_methods_answer_problems_not_html(client) -> None:
    missing = client.get("/nowhere")
    assert missing.status_code == 404 and missing.mimetype == "application/problem+json"
    wrong = client.get("/things")
    assert wrong.status_code == 405 and wrong.json["status"] == 405
    assert "POST" in wrong.headers["Allow"]


def test_an_unexpected_error_is_a_problem_500_with_the_request_id(client) -> None:
    response = client.get("/boom")
    assert response.status_code == 500
    assert response.json["requestId"] == response.headers["X-Request-Id"]


def test_a_typed_error_carries_its_code(client) -> None:
    response = client.post("/conflict")
    assert response.status_code == 409
    assert response.json["code"] == "already_member"


def test_every_response_carries_a_request_id_and_a_sent_one_is_kept(client) -> None:
    assert len(client.get("/nowhere").headers["X-Request-Id"]) >= 8
    assert (
        client.get("/nowhere", headers={"X-Request-Id": "abc12345-req"}).headers["X-Request-Id"]
        == "abc12345-req"
    )


def test_the_engine_envelope_has_type_detail_status_and_request_id() -> None:
    response = _app(engine_problems.render).post("/conflict")
    assert set(response.json) == {"type", "detail", "status", "requestId"}
    assert response.json["type"] == "about:blank#conflict"


def test_the_openapi_document_describes_the_body_schema() -> None:
    client = _app(dispatch_problems.render)
    app = client.application
    with app.app_context():
        doc = build_openapi(
            app,
            title="t",
            version="1",
            description="",
            problem_schema={"type": "object"},
            security_schemes={},
        )
    operation = doc["paths"]["/things"]["post"]
    assert operation["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Thing"
    }
    assert doc["components"]["schemas"]["Thing"]["properties"]["name"]["maxLength"] == 5
    assert "400" in operation["responses"]


def test_large_json_answers_are_gzipped_only_for_clients_that_accept_it() -> None:
    import gzip
    import json as jsonlib

    proxy = peewee.DatabaseProxy()
    proxy.initialize(peewee.SqliteDatabase(":memory:"))
    app = create_base_app("big", render_problem=dispatch_problems.render, database=proxy)
    bp = Blueprint("big", __name__)

    @endpoint(bp, "GET", "/big")
    def big():
        return {"items": [{"n": n, "text": "x" * 40} for n in range(3000)]}

    app.register_blueprint(bp)
    client = app.test_client()
    plain = client.get("/big")
    assert "Content-Encoding" not in plain.headers and len(plain.json["items"]) == 3000
    packed = client.get("/big", headers={"Accept-Encoding": "gzip, deflate"})
    assert packed.headers["Content-Encoding"] == "gzip"
    assert jsonlib.loads(gzip.decompress(packed.data)) == plain.json
    assert len(packed.data) < len(plain.data) / 5
    small = client.get("/nowhere", headers={"Accept-Encoding": "gzip"})
    assert "Content-Encoding" not in small.headers
