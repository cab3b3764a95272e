"""Company settings, logo, depots and billing."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.dispatch.factory import make_company, make_member


@pytest.fixture
def company():
    return make_company("Arev")


@pytest.fixture
def owner(dispatch_app, company):
    return make_member(dispatch_app, company, "owner")


@pytest.fixture
def dispatcher(dispatch_app, company):
    return make_member(dispatch_app, company, "dispatcher")


def test_dispatchers_read_the_company_and_only_owners_change_it(dispatch_client, owner, dispatcher) -> None:
    body = dispatch_client.get("/company", headers=dispatcher.headers).json["company"]
    assert body["name"] == "Arev" and body["plan"] == "start" and body["showCourierPhone"] is False
    assert (
        dispatch_client.patch("/company", json={"name": "Arev 2"}, headers=dispatcher.headers).status_code
        == 403
    )
    changed = dispatch_client.patch(
        "/company",
        json={
            "name": "Arev Express",
            "brandColor": "#12ab9F",
            "smsSender": "AREV",
            "showCourierPhone": True,
            "phone": None,
            "smsTemplate": "{company}: {minutes} min late, {link}",
        },
        headers=owner.headers,
    )
    assert changed.status_code == 200
    company = changed.json["company"]
    assert company["name"] == "Arev Express" and company["brandColor"] == "#12ab9F"
    assert company["showCourierPhone"] is True and company["smsSender"] == "AREV"


@pytest.mark.parametrize(
    "patch",
    [
        {"brandColor": "red"},
        {"brandColor": "#12345"},
        {"smsSender": "x" * 12},
        {"smsTemplate": "x" * 481},
        {"name": "A"},
        {"logoUrl": "http://insecure.example/logo.png"},
        {"showCourierPhone": "yes"},
    ],
)
def test_bad_settings_are_400(dispatch_client, owner, patch) -> None:
    assert dispatch_client.patch("/company", json=patch, headers=owner.headers).status_code == 400


def test_a_courier_cannot_read_company_settings(dispatch_app, dispatch_client, company) -> None:
    courier = make_member(dispatch_app, company, "courier")
    assert dispatch_client.get("/company", headers=courier.headers).status_code == 403


def _path(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}"


def test_an_uploaded_logo_is_served_through_short_lived_signed_links(dispatch_client, owner, company) -> None:
    upload = dispatch_client.post(
        "/company/logo/upload-url", json={"contentType": "image/png"}, headers=owner.headers
    ).json
    assert upload["key"].startswith(f"{company.id}/logos/") and upload["expiresIn"] > 0
    assert (
        dispatch_client.put(_path(upload["url"]), data=b"\x89PNG", content_type="image/png").status_code
        == 200
    )
    body = dispatch_client.patch("/company", json={"logoKey": upload["key"]}, headers=owner.headers).json[
        "company"
    ]
    assert body["hasUploadedLogo"] is True
    assert dispatch_client.get(_path(body["logoUrl"])).data == b"\x89PNG"
    external = dispatch_client.patch(
        "/company", json={"logoUrl": "https://cdn.example/logo.png"}, headers=owner.headers
    ).json["company"]
    assert external["hasUploadedLogo"] is False and external["logoUrl"] == "https://cdn.example/logo.png"


def test_a_logo_of_another_type_is_415(dispatch_client, owner) -> None:
    response = dispatch_client.post(
        "/company/logo/upload-url", json={"contentType": "image/gif"}, headers=owner.headers
    )
    assert response.status_code == 415


def test_a_logo_key_not_uploaded_for_this_company_is_422(dispatch_app, dispatch_client, owner) -> None:
    other_owner = make_member(dispatch_app, make_company("Other"), "owner")
    upload = dispatch_client.post(
        "/company/logo/upload-url", json={"contentType": "png"}, headers=other_owner.headers
    ).json
    dispatch_client.put(_path(upload["url"]), data=b"x", content_type="image/png")
    assert (
        dispatch_client.patch("/company", json={"logoKey": upload["key"]}, headers=owner.headers).status_code
        == 422
    )
    assert (
        dispatch_client.patch(
            "/company", json={"logoKey": "1/logos/none.png"}, headers=owner.headers
        ).status_code
        == 422
    )


def test_depots_keep_exactly_one_default_and_promote_the_oldest_on_delete(dispatch_client, owner) -> None:
    depots = dispatch_client.get("/company/depots", headers=owner.headers).json["depots"]
    first_id = depots[0]["id"]
    second = dispatch_client.post(
        "/company/depots",
        json={"name": "North", "address": "Komitas 1", "point": {"lat": 40.21, "lon": 44.52}},
        headers=owner.headers,
    )
    assert second.status_code == 201 and second.json["depot"]["isDefault"] is False
    third = dispatch_client.post(
        "/company/depots",
        json={
            "name": "South",
            "address": "Shirak 1",
            "point": {"lat": 40.15, "lon": 44.49},
            "isDefault": True,
        },
        headers=owner.headers,
    ).json["depot"]
    listed = dispatch_client.get("/company/depots", headers=owner.headers).json["depots"]
    assert [d["isDefault"] for d in listed] == [True, False, False] and listed[0]["id"] == third["id"]
    assert dispatch_client.delete(f"/company/depots/{third['id']}", headers=owner.headers).status_code == 204
    listed = dispatch_client.get("/company/depots", headers=owner.headers).json["depots"]
    assert listed[0]["id"] == first_id and listed[0]["isDefault"] is True


def test_depot_edits_and_their_errors(dispatch_app, dispatch_client, owner) -> None:
    depot_id = dispatch_client.get("/company/depots", headers=owner.headers).json["depots"][0]["id"]
    edited = dispatch_client.patch(
        f"/company/depots/{depot_id}",
        json={"name": "Central", "point": {"lat": 40.2, "lon": 44.5}},
        headers=owner.headers,
    )
    assert edited.status_code == 200 and edited.json["depot"]["name"] == "Central"
    assert (
        dispatch_client.patch(
            f"/company/depots/{depot_id}", json={"isDefault": False}, headers=owner.headers
        ).status_code
        == 400
    )
    assert (
        dispatch_client.patch(
            f"/company/depots/{depot_id}", json={"point": {"lat": 10, "lon": 44.5}}, headers=owner.headers
        ).status_code
        == 422
    )
    assert (
        dispatch_client.post(
            "/company/depots",
            json={"name": "X", "address": "Y", "point": {"lat": 40.2, "lon": 50}},
            headers=owner.headers,
        ).status_code
        == 422
    )
    stranger = make_member(dispatch_app, make_company("Other"), "owner")
    assert (
        dispatch_client.patch(
            f"/company/depots/{depot_id}", json={"name": "Mine"}, headers=stranger.headers
        ).status_code
        == 404
    )
    assert dispatch_client.delete(f"/company/depots/{depot_id}", headers=stranger.headers).status_code == 404
    assert dispatch_client.delete("/company/depots/999999", headers=owner.headers).status_code == 404


def test_billing_shows_the_plan_table_and_changing_plan_takes_no_payment(
    dispatch_client, owner, dispatcher
) -> None:
    assert dispatch_client.get("/company/billing", headers=dispatcher.headers).status_code == 403
    billing = dispatch_client.get("/company/billing", headers=owner.headers).json["billing"]
    assert billing["plan"] == "start" and billing["priceAmd"] == 15000
    assert billing["limits"] == {"deliveriesPerMonth": 500, "couriers": 5}
    assert billing["invoices"] == []
    assert billing["plans"] == [
        {"plan": "start", "deliveriesPerMonth": 500, "couriers": 5, "priceAmd": 15000},
        {"plan": "city", "deliveriesPerMonth": 3000, "couriers": 25, "priceAmd": 39000},
        {"plan": "network", "deliveriesPerMonth": None, "couriers": None, "priceAmd": None},
    ]
    assert set(billing["usage"]) == {"deliveriesThisMonth", "activeCouriers", "periodStart"}
    network = dispatch_client.patch("/company/plan", json={"plan": "network"}, headers=owner.headers).json[
        "billing"
    ]
    assert network["plan"] == "network" and network["priceAmd"] is None
    assert network["limits"] == {"deliveriesPerMonth": None, "couriers": None}
    assert (
        dispatch_client.patch("/company/plan", json={"plan": "gold"}, headers=owner.headers).status_code
        == 400
    )
