"""The demo's sample order is really on its way (issue 46): the tracking link `appliance demo`
prints opens on an order the courier has picked up, at a Yerevan address of the sample streets."""

from __future__ import annotations

from pathlib import Path

from appliance.cli.admin import migrate_all
from appliance.demo import DEMO_RECIPIENT, delivery_step, dispatch_step
from appliance.dispatch.app import create_app
from appliance.dispatch.geocoding.build import INDEX_NAME, build_index
from appliance.dispatch.geocoding.search import place
from appliance.sample.yerevan_names import TARGET
from appliance.settings import load_settings


def test_the_demos_printed_tracking_link_shows_its_order_picked_up_at_abovyan_10(tmp_path: Path) -> None:
    settings = load_settings({"data_dir": str(tmp_path)}, environ={})
    migrate_all(settings)
    (tmp_path / "routing" / "current").mkdir(parents=True)
    build_index(TARGET, tmp_path / "routing" / "current" / INDEX_NAME)
    state: dict = {}
    dispatch_step(settings, state)
    printed = delivery_step(settings, state)
    assert printed == [f"Tracking page of an order on its way: {state['tracking_url']}"]

    client = create_app(settings).test_client()
    token = state["tracking_url"].rsplit("/t/", 1)[1]
    view = client.get(f"/track/{token}")
    assert view.status_code == 200, view.get_json()
    assert view.get_json()["stage"] == "picked_up"

    owner = client.post("/auth/login", json={"email": "owner@demo.am", "password": "demo-owner-pass"})
    headers = {"Authorization": f"Bearer {owner.get_json()['accessToken']}"}
    orders = client.get("/orders?limit=100", headers=headers).get_json()["orders"]
    (order,) = [o for o in orders if o["recipientName"] == DEMO_RECIPIENT]
    assert order["status"] == "picked_up"
    assert order["addressLabelHy"] == "Աբովյան փողոց 10"
    assert order["addressDetails"]["apartment"] == "12"
    assert (order["pin"]["lat"], order["pin"]["lon"]) == place(tmp_path, "Abovyan 10")

    # Running the demo again keeps the one order on its way, with a fresh link.
    delivery_step(settings, state)
    orders = client.get("/orders?limit=100", headers=headers).get_json()["orders"]
    assert [o["status"] for o in orders if o["recipientName"] == DEMO_RECIPIENT] == ["picked_up"]
