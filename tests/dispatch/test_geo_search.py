"""The offline address index (issue 27 item 3): built from the OpenStreetMap extract the roads are
built from, searched in Armenian, Russian and Latin letters, used by the import."""

from __future__ import annotations

from pathlib import Path

import osmium
import pytest
from anyascii import anyascii

from appliance.dispatch.geocoding.build import INDEX_NAME, build_index
from appliance.dispatch.geocoding.search import Unplaced, place, search
from tests.dispatch.factory import make_member

# -- a few real-looking Yerevan streets, written as an OpenStreetMap extract ----------------------

ABOVYAN = {
    "highway": "primary",
    "name": "Աբովյան փողոց",
    "name:ru": "улица Абовяна",
    "name:en": "Abovyan Street",
}
MASHTOTS = {
    "highway": "primary",
    "name": "Մաշտոցի պողոտա",
    "name:hy": "Մաշտոցի պողոտա",
    "name:ru": "проспект Маштоца",
    "name:en": "Mashtots Avenue",
}
KHANJYAN = {"highway": "residential", "name": "Խանջյան փողոց", "name:ru": "улица Ханджяна"}


def write_extract(path: Path) -> Path:
    ids = iter(range(1, 10_000))
    with osmium.SimpleWriter(str(path), overwrite=True) as writer:

        def node(lat: float, lon: float, **tags: str) -> int:
            node_id = next(ids)
            writer.add_node(osmium.osm.mutable.Node(id=node_id, location=(lon, lat), tags=tags))
            return node_id

        def way(points: list[tuple[float, float]], tags: dict[str, str]) -> None:
            refs = [node(lat, lon) for lat, lon in points]
            writer.add_way(osmium.osm.mutable.Way(id=next(ids), nodes=refs, tags=tags))

        way([(40.1810, 44.5120), (40.1830, 44.5150), (40.1850, 44.5180)], ABOVYAN)
        way([(40.1840, 44.5050), (40.1860, 44.5100), (40.1880, 44.5150)], MASHTOTS)
        way([(40.1750, 44.5200), (40.1760, 44.5260)], KHANJYAN)
        # A street named as one in Yerevan, far outside the service area.
        way([(50.10, 30.10), (50.11, 30.12)], {"highway": "residential", "name": "Սայաթ-Նովա փողոց"})
        node(40.1831, 44.5151, **{"addr:street": "Աբովյան փողոց", "addr:housenumber": "10"})
        node(40.1841, 44.5166, **{"addr:street": "Աբովյան փողոց", "addr:housenumber": "12/1"})
        node(40.1861, 44.5101, **{"addr:street": "Մաշտոցի պողոտա", "addr:housenumber": "5"})
        node(40.1755, 44.5230, **{"addr:street": "Խանջյան փողոց", "addr:housenumber": "27"})
        node(40.1812, 44.5122, **{"addr:housenumber": "3"})  # no street: the nearest (Abovyan)
        node(50.101, 30.101, **{"addr:street": "Սայաթ-Նովա փողոց", "addr:housenumber": "7"})
        node(
            40.1832,
            44.5152,
            entrance="main",
            ref="2",
            **{"addr:housenumber": "10", "addr:street": "Աբովյան փողոց"},
        )
        node(
            40.1790,
            44.5130,
            place="neighbourhood",
            name="Կենտրոն",
            **{"name:ru": "Кентрон", "name:en": "Kentron"},
        )
        way(
            [(40.1900, 44.5000), (40.1900, 44.5010), (40.1910, 44.5010), (40.1900, 44.5000)],
            {"building": "yes", "addr:street": "Մաշտոցի պողոտա", "addr:housenumber": "7"},
        )
    return path


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data directory with only the address index of the streets above in place."""
    root = tmp_path_factory.mktemp("geo-index")
    extract = write_extract(root / "streets.osm.pbf")
    data_dir = root / "data"
    (data_dir / "routing" / "current").mkdir(parents=True)
    build_index(extract, data_dir / "routing" / "current" / INDEX_NAME)
    return data_dir


def top(data_dir: Path, query: str, **kw) -> tuple[str, str]:
    found = search(data_dir, query, **kw)
    assert found, query
    return found[0].label, found[0].kind


@pytest.mark.parametrize(
    "query",
    [
        "Աբովյան 10",
        "Աբովյան փողոց 10",
        "Abovyan 10",
        "Abovian 10",
        "abovyan street 10",
        "Абовяна 10",
        "улица Абовяна 10",
    ],
)
def test_a_house_is_found_by_its_street_and_number_in_armenian_russian_and_latin(index_dir, query) -> None:
    assert top(index_dir, query) == ("Աբովյան փողոց 10", "address")


@pytest.mark.parametrize(
    ("query", "label", "kind"),
    [
        ("Mashtots 5", "Մաշտոցի պողոտա 5", "address"),
        ("Маштоца 5", "Մաշտոցի պողոտա 5", "address"),
        ("Մաշտոցի 7", "Մաշտոցի պողոտա 7", "address"),  # a building's outline
        ("Khanjyan 27", "Խանջյան փողոց 27", "address"),
        ("Ханджяна 27", "Խանջյան փողոց 27", "address"),
        ("Abovyan 12/1", "Աբովյան փողոց 12/1", "address"),
        ("Abovyan 3", "Աբովյան փողոց 3", "address"),  # no addr:street: the nearest street's
        ("Kentron", "Կենտրոն", "place"),
        ("Кентрон", "Կենտրոն", "place"),
        ("Mashtots", "Մաշտոցի պողոտա", "street"),
        ("Abovyan 999", "Աբովյան փողոց", "street"),  # a number it does not have: the street
    ],
)
def test_streets_places_and_numbers_are_found_in_any_spelling(index_dir, query, label, kind) -> None:
    assert top(index_dir, query) == (label, kind)


def test_an_entrance_is_found_with_its_building_and_query_syntax_is_only_text(index_dir) -> None:
    labels = [(f.label, f.kind) for f in search(index_dir, "Abovyan 10")]
    assert ("Աբովյան փողոց 10, entrance 2", "entrance") in labels
    # FTS5 syntax in a query is text, never an operator nor an error.
    assert top(index_dir, 'Abovyan* "10" ^(') == ("Աբովյան փողոց 10", "address")
    assert search(index_dir, "   ") == []


def test_place_refuses_what_it_cannot_place_with_the_reason(index_dir, tmp_path) -> None:
    assert place(index_dir, "Abovyan 10") == pytest.approx((40.1831, 44.5151))
    with pytest.raises(Unplaced, match="house number is not in the address index"):
        place(index_dir, "Abovyan 999")
    with pytest.raises(Unplaced, match="not in the address index"):
        place(index_dir, "Nowhere street 1")
    with pytest.raises(Unplaced, match="outside the service area"):
        place(index_dir, "Սայաթ-Նովա 7")
    with pytest.raises(Unplaced, match="no address index"):
        place(tmp_path, "Abovyan 10")


def test_every_house_number_of_the_sample_streets_is_found_by_its_street_and_number_also_in_latin(
    tmp_path: Path, yerevan_pbf: Path
) -> None:
    data_dir = tmp_path / "data"
    (data_dir / "routing" / "current").mkdir(parents=True)
    build_index(yerevan_pbf, data_dir / "routing" / "current" / INDEX_NAME)
    houses = []
    wanted = osmium.filter.KeyFilter("addr:housenumber")
    for obj in osmium.FileProcessor(str(yerevan_pbf)).with_filter(wanted):
        tags = dict(obj.tags)
        if "addr:street" in tags:
            houses.append((tags["addr:street"], tags["addr:housenumber"]))
    assert len(houses) >= 60
    missed = []
    for street, number in houses:
        expected = f"{street} {number}"
        for query in (expected, anyascii(expected), f"{anyascii(street).lower()} {number}"):
            labels = [f.label for f in search(data_dir, query, limit=5) if f.kind == "address"]
            if expected not in labels:
                missed.append(query)
    assert missed == []


# -- GET /geo/search and the import -----------------------------------------------------------------


@pytest.fixture
def indexed_data_dir(data_dir: Path, index_dir: Path) -> Path:
    (data_dir / "routing").mkdir(exist_ok=True)
    (data_dir / "routing" / "current").symlink_to(index_dir / "routing" / "current", target_is_directory=True)
    return data_dir


def test_geo_search_answers_dispatchers_best_first(
    indexed_data_dir, dispatch_app, dispatch_client, dispatcher, company
) -> None:
    answer = dispatch_client.get("/geo/search?q=Abovyan%2010&near=40.18,44.51", headers=dispatcher.headers)
    assert answer.status_code == 200
    first = answer.json["results"][0]
    assert first == {
        "label": "Աբովյան փողոց 10",
        "lat": pytest.approx(40.1831),
        "lon": pytest.approx(44.5151),
        "kind": "address",
        "apartment": None,
    }
    courier = make_member(dispatch_app, company, "courier")
    assert dispatch_client.get("/geo/search?q=Abovyan", headers=courier.headers).status_code == 403
    assert dispatch_client.get("/geo/search?q=Abovyan").status_code == 401
    outside = dispatch_client.get("/geo/search?q=Abovyan&near=50.1,30.1", headers=dispatcher.headers)
    assert outside.status_code == 422
    assert dispatch_client.get("/geo/search?q=", headers=dispatcher.headers).status_code == 400


def test_geo_search_without_an_index_is_unavailable(dispatch_client, dispatcher) -> None:
    answer = dispatch_client.get("/geo/search?q=Abovyan", headers=dispatcher.headers)
    assert answer.status_code == 503 and "routing build" in answer.json["detail"]


def test_the_import_places_rows_without_coordinates_and_keeps_those_it_cannot_as_drafts_needing_a_pin(
    indexed_data_dir, dispatch_client, dispatcher, company
) -> None:
    data = (
        "externalRef,recipientName,recipientPhone,address\n"
        'G-1,Ani,091123456,"Abovyan 10, kv. 12"\n'
        "G-2,Aram,091123457,Маштоца 5\n"
        "G-3,Anna,091123458,Abovyan 999\n"
        "G-4,Arev,091123459,Սայաթ-Նովա 7\n"
    ).encode()
    answer = dispatch_client.post(
        "/orders/import", data=data, content_type="text/csv", headers=dispatcher.headers
    )
    assert answer.status_code == 200, answer.json
    body = answer.json
    assert body["created"] == 4 and body["refused"] == []
    kept = {r["row"]: r for r in body["needsPin"]}
    assert set(kept) == {4, 5}
    assert kept[4]["header"] == "address" and "house number" in kept[4]["message"]
    assert "outside the service area" in kept[5]["message"]
    orders = {
        o["externalRef"]: o for o in dispatch_client.get("/orders", headers=dispatcher.headers).json["orders"]
    }
    assert orders["G-1"]["pin"] == {"lat": pytest.approx(40.1831), "lon": pytest.approx(44.5151)}
    assert orders["G-1"]["addressLabelHy"] == "Abovyan 10, kv. 12"
    assert orders["G-1"]["addressDetails"]["apartment"] == "12"  # from the address
    assert orders["G-1"]["status"] == "ready" and orders["G-1"]["needsPin"] is None
    assert orders["G-2"]["pin"] == {"lat": pytest.approx(40.1861), "lon": pytest.approx(44.5101)}

    # The unplaceable rows: drafts at the company's depot, which cannot be made ready until a
    # dispatcher drops the pin.
    waiting = orders["G-3"]
    assert waiting["id"] == kept[4]["orderId"]
    assert waiting["status"] == "draft" and "house number" in waiting["needsPin"]
    assert "ready" not in waiting["allowedMoves"]["status"]
    ready = dispatch_client.post(
        f"/orders/{waiting['id']}/status", json={"status": "ready"}, headers=dispatcher.headers
    )
    assert ready.status_code == 409 and ready.json["code"] == "pin_needed"
    pinned = dispatch_client.patch(
        f"/orders/{waiting['id']}", json={"pin": {"lat": 40.1835, "lon": 44.5155}}, headers=dispatcher.headers
    )
    assert pinned.status_code == 200, pinned.json
    assert pinned.json["order"]["needsPin"] is None
    ready = dispatch_client.post(
        f"/orders/{waiting['id']}/status", json={"status": "ready"}, headers=dispatcher.headers
    )
    assert ready.status_code == 200, ready.json
