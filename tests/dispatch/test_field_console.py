"""The console in the field (issue 28, item 3), its rules through the API: the tracking link in
force is shown without issuing a new one."""

from __future__ import annotations

from appliance.dispatch.models import TrackingLink
from tests.dispatch.orders_helpers import assigned_order


def test_the_link_in_force_is_shown_without_ending_it_and_kept_encrypted(
    dispatch_client, dispatcher, courier
) -> None:
    order = assigned_order(dispatch_client, dispatcher, courier)
    path = f"/orders/{order['id']}/tracking"
    assert dispatch_client.get(path, headers=dispatcher.headers).json == {"link": None}
    issued = dispatch_client.post(path, json={}, headers=dispatcher.headers).json
    for _ in range(2):  # looking twice ends nothing
        shown = dispatch_client.get(path, headers=dispatcher.headers)
        assert shown.status_code == 200
        assert shown.json["link"]["path"] == issued["path"]
        assert shown.json["link"]["url"].endswith(issued["path"])
        assert shown.json["link"]["expiresAt"] == issued["expiresAt"]
    assert dispatch_client.get(f"/track/{issued['token']}").status_code == 200
    stored = TrackingLink.get(TrackingLink.order == int(order["id"]))
    assert issued["token"].encode() not in bytes(stored.token_cipher)
    # Issuing a new one is what ends the old one; the new one is then in force.
    fresh = dispatch_client.post(path, json={}, headers=dispatcher.headers).json
    assert dispatch_client.get(f"/track/{issued['token']}").status_code == 404
    assert dispatch_client.get(path, headers=dispatcher.headers).json["link"]["path"] == fresh["path"]


def test_a_link_issued_before_tokens_were_kept_is_reported_without_its_address(
    dispatch_client, dispatcher, courier
) -> None:
    order = assigned_order(dispatch_client, dispatcher, courier)
    path = f"/orders/{order['id']}/tracking"
    dispatch_client.post(path, json={}, headers=dispatcher.headers)
    TrackingLink.update(token_cipher=None).execute()
    link = dispatch_client.get(path, headers=dispatcher.headers).json["link"]
    assert link["path"] is None and link["url"] is None and link["expiresAt"]
    assert dispatch_client.get("/orders/999999/tracking", headers=dispatcher.headers).status_code == 404
