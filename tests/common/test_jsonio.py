"""JSON answers: orjson's encoding, the same JSON the standard library would write."""

from __future__ import annotations

import dataclasses
import decimal
import json

from flask import Flask

from appliance.common.jsonio import OrjsonProvider, dumps_bytes


def test_text_stays_utf8_and_keys_keep_their_order():
    encoded = dumps_bytes({"b": "Երևան", "a": [1, 2.5, None, True]})
    assert encoded.decode() == '{"b":"Երևան","a":[1,2.5,null,true]}'


def test_integers_beyond_64_bits_are_written_exactly():
    value = {"amountMinor": 2**256 - 1, "id": -(2**70)}
    assert json.loads(dumps_bytes(value)) == value


def test_decimals_dataclasses_and_integer_keys_are_encoded_as_flask_would():
    @dataclasses.dataclass
    class Point:
        lat: float

    encoded = json.loads(dumps_bytes({1: decimal.Decimal("1.10"), "p": Point(40.1)}))
    assert encoded == {"1": "1.10", "p": {"lat": 40.1}}


def test_an_app_answers_json_through_the_provider():
    app = Flask(__name__)
    app.json = OrjsonProvider(app)

    @app.get("/")
    def index():
        return {"ok": True, "name": "Արամ"}

    response = app.test_client().get("/")
    assert response.mimetype == "application/json"
    assert response.get_json() == {"ok": True, "name": "Արամ"}
