"""One rule for 400 versus 422 on both services (docs/errors.md), and OpenAPI documents that list
exactly what each operation answers (issue 18, item 4)."""

from __future__ import annotations

import pytest

from tests.dispatch.factory import make_company, make_member
from tests.engine.helpers import Signer, make_operator

INSIDE = {"lat": 40.18, "lon": 44.51}


@pytest.fixture
def dispatch(dispatch_app):
    company = make_company()
    return (
        dispatch_app.test_client(),
        make_member(dispatch_app, company, "dispatcher"),
        make_member(dispatch_app, company, "courier"),
    )


@pytest.fixture
def dispatch_doc(dispatch_client):
    return dispatch_client.get("/openapi.json").json


@pytest.fixture
def engine_doc(engine_client):
    return engine_client.get("/openapi.json").json


def codes(doc, method: str, path: str) -> set[str]:
    return set(doc["paths"][path][method]["responses"])


@pytest.mark.parametrize("path", ["/plans/suggest", "/plans/recompute", "/plans/move-stop", "/plans/apply"])
def test_a_plan_body_of_the_wrong_shape_is_400_and_documented(dispatch, dispatch_doc, path) -> None:
    client, dispatcher, _ = dispatch
    response = client.post(path, json={"routes": "all of them", "orderIds": "1"}, headers=dispatcher.headers)
    assert response.status_code == 400 and response.json["status"] == 400
    assert response.mimetype == "application/problem+json"
    malformed = client.post(path, data="{", content_type="application/json", headers=dispatcher.headers)
    assert malformed.status_code == 400
    assert {"400", "422"} <= codes(dispatch_doc, "post", path)


def test_a_plan_with_more_routes_than_allowed_is_422(dispatch) -> None:
    client, dispatcher, _ = dispatch
    routes = [{"courierId": n, "stops": [{"orderId": n, "sequence": 1}]} for n in range(1, 22)]
    response = client.post("/plans/apply", json={"routes": routes}, headers=dispatcher.headers)
    assert response.status_code == 422


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/geo/route", {"coordinates": [INSIDE, {"lat": 48.85, "lon": 2.35}]}),
        ("/geo/matrix", {"sources": [INSIDE], "destinations": [{"lat": 40.18, "lon": 50.0}]}),
        ("/geo/optimize", {"start": {"lat": 38.0, "lon": 44.5}, "stops": [INSIDE]}),
    ],
)
def test_a_geo_point_outside_the_service_area_is_422_and_documented(
    dispatch, dispatch_doc, path, body
) -> None:
    client, dispatcher, _ = dispatch
    response = client.post(path, json=body, headers=dispatcher.headers)
    assert response.status_code == 422 and response.json["status"] == 422
    assert {"400", "422"} <= codes(dispatch_doc, "post", path)


def test_a_finding_invalid_in_itself_beside_an_unprocessable_one_is_400(dispatch) -> None:
    client, dispatcher, _ = dispatch
    body = {"coordinates": [{"lat": 48.85, "lon": 2.35}, {"lat": "40.18", "lon": 44.51}]}
    assert client.post("/geo/route", json=body, headers=dispatcher.headers).status_code == 400


def test_a_location_post_without_a_body_is_400_and_documented(dispatch, dispatch_doc) -> None:
    client, _, courier = dispatch
    response = client.post("/courier/location", headers=courier.headers)
    assert response.status_code == 400 and response.mimetype == "application/problem+json"
    assert {"400", "422"} <= codes(dispatch_doc, "post", "/courier/location")


def test_a_nul_character_is_400_even_where_a_batch_limit_is_422(dispatch) -> None:
    client, _, courier = dispatch
    point = {**INSIDE, "capturedAt": "2026-11-22T10:00:00Z", "source": "gps\u0000"}
    response = client.post("/courier/location", json={"points": [point]}, headers=courier.headers)
    assert response.status_code == 400


def test_every_operation_that_reads_a_body_documents_400_413_and_415(dispatch_doc, engine_doc) -> None:
    for doc in (dispatch_doc, engine_doc):
        for path, item in doc["paths"].items():
            for method, operation in item.items():
                if "requestBody" in operation:
                    assert {"400", "413", "415"} <= set(operation["responses"]), (method, path)


def test_the_engine_never_documents_422(engine_doc) -> None:
    assert not [
        path for path, item in engine_doc["paths"].items() for op in item.values() if "422" in op["responses"]
    ]


def test_the_engine_answers_a_malformed_payout_id_400_as_documented(
    engine_app, engine_client, engine_doc
) -> None:
    operator = make_operator(engine_app)
    signer = Signer(engine_client, operator["operatorId"], operator["secret"])
    response = signer.request("GET", "/v1/payouts/PYO_NOT-VALID")
    assert response.status_code == 400 and response.mimetype == "application/problem+json"
    assert "400" in codes(engine_doc, "get", "/v1/payouts/{payout_id}")


def test_a_replayed_submission_and_an_existing_deposit_address_document_their_200(engine_doc) -> None:
    assert {"200", "201"} <= codes(engine_doc, "post", "/v1/payouts")
    replayed = engine_doc["paths"]["/v1/payouts"]["post"]["responses"]["200"]
    assert replayed["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/PayoutSubmitted"
    }
    assert {"200", "201"} <= codes(engine_doc, "post", "/v1/deposit-addresses")


def test_the_engine_document_names_the_offered_assets_and_chains(engine_doc) -> None:
    schemas = engine_doc["components"]["schemas"]
    assert schemas["PayoutSubmit"]["properties"]["asset"]["enum"] == ["ETH", "USDC"]
    assert schemas["DepositAddressRequest"]["properties"]["chainId"]["enum"] == ["eth_local"]


def test_the_dispatch_document_states_the_service_area(dispatch_doc) -> None:
    point = dispatch_doc["components"]["schemas"]["LatLon"]["properties"]
    assert (point["lat"]["minimum"], point["lat"]["maximum"]) == (38.8, 41.4)
    assert (point["lon"]["minimum"], point["lon"]["maximum"]) == (43.4, 46.7)


def test_health_failures_are_documented_as_problems(dispatch_doc, engine_doc) -> None:
    for doc, path in ((dispatch_doc, "/healthz"), (engine_doc, "/health/ready")):
        answer = doc["paths"][path]["get"]["responses"]["503"]
        assert list(answer["content"]) == ["application/problem+json"]


@pytest.mark.parametrize("path", ["/orders/9223372036854775808", "/orders/99999999999999999999999999"])
def test_an_id_beyond_any_record_is_404_for_every_method(dispatch, path) -> None:
    client, dispatcher, _ = dispatch
    for method in ("GET", "PATCH"):
        response = client.open(path, method=method, json={}, headers=dispatcher.headers)
        assert response.status_code == 404 and response.mimetype == "application/problem+json"
    depot = client.delete("/company/depots/9223372036854775808", headers=dispatcher.headers)
    assert depot.status_code in {403, 404}  # a dispatcher may not manage depots; never 405 or 500


def test_path_ids_are_documented_within_64_bits(dispatch_doc) -> None:
    parameter = dispatch_doc["paths"]["/orders/{order_id}"]["get"]["parameters"][0]
    assert parameter["schema"] == {"type": "integer", "minimum": 0, "maximum": 2**63 - 1}
