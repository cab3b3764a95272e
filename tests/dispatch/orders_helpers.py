"""Helpers for order tests."""

from __future__ import annotations

from typing import Any

ORDER = {
    "recipientName": "Gayane Petrosyan",
    "recipientPhone": "+37491123456",
    "amountAmd": 5000,
    "addressLabelHy": "Աբովյան 10",
    "pin": {"lat": 40.1812, "lon": 44.5140},
}


def create_order(client, member, **fields: Any) -> dict[str, Any]:
    response = client.post("/orders", json=ORDER | fields, headers=member.headers)
    assert response.status_code == 201, response.json
    return response.json["order"]


def ready_order(client, member, **fields: Any) -> dict[str, Any]:
    order = create_order(client, member, **fields)
    response = client.post(f"/orders/{order['id']}/status", json={"status": "ready"}, headers=member.headers)
    assert response.status_code == 200, response.json
    return response.json["order"]


def assigned_order(client, dispatcher, courier, **fields: Any) -> dict[str, Any]:
    order = ready_order(client, dispatcher, **fields)
    response = client.post(
        f"/orders/{order['id']}/assign", json={"courierId": courier.courier.id}, headers=dispatcher.headers
    )
    assert response.status_code == 201, response.json
    return response.json["order"]


def courier_status(client, courier, order_id: str, **body: Any):
    return client.post(f"/courier/orders/{order_id}/status", json=body, headers=courier.headers)
