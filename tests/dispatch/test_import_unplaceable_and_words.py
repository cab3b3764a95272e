"""The import as a Yerevan shop's sheet has it (issue 46): Armenian or Russian headers, problems
in the reader's language naming the sheet's own header, rows whose address cannot be placed kept
as drafts needing a pin, and delivery windows written as times of the import's day."""

from __future__ import annotations

from datetime import datetime

import pytest

from appliance.common import clock
from tests.dispatch.test_geo_search import index_dir, indexed_data_dir  # noqa: F401  (fixtures)

HY_SHEET = (
    "Պատվերի համար,Ստացող,Հեռախոս,Գումար,Հասցե,Առաքման ժամ\n"
    'A-1,Անի,091123456,5000,"Աբովյան փ. 10, բն. 12",14:00-16:00\n'
    "A-2,Արամ,12,5000,Abovyan 10,\n"  # a phone that is no phone
    "A-3,Աննա,091123458,հինգ հազար,Abovyan 10,\n"  # an amount in words
    "A-4,Արև,091123459,5000,Abovyan 10,25:00\n"  # no such time
    "A-5,Գոհար,091123450,5000,Nowhere street 1,\n"  # an address the index cannot place
)


@pytest.fixture(autouse=True)
def _import_day():
    clock.freeze(datetime.fromisoformat("2026-11-26T06:00:00+00:00"))
    yield
    clock.reset()


def _import(client, headers, data: str, language: str | None):
    extra = {"Accept-Language": language} if language else {}
    answer = client.post(
        "/orders/import", data=data.encode(), content_type="text/csv", headers={**headers, **extra}
    )
    assert answer.status_code == 200, answer.json
    return answer.json


@pytest.mark.usefixtures("indexed_data_dir")
def test_an_armenian_sheets_problems_are_armenian_and_name_its_own_headers(
    dispatch_client, dispatcher
) -> None:
    body = _import(dispatch_client, dispatcher.headers, HY_SHEET, "hy")
    assert body["created"] == 2
    refused = {r["row"]: r for r in body["refused"]}
    assert set(refused) == {3, 4, 5}
    assert refused[3] == {
        "row": 3,
        "column": "recipientPhone",  # the API's name: clients rely on it
        "header": "Հեռախոս",  # the sheet's own
        "message": "անվավեր հեռախոսահամար՝ '12'",
    }
    assert refused[4]["header"] == "Գումար" and refused[4]["message"].startswith("սպասվում էր ամբողջ գումար")
    assert refused[5]["header"] == "Առաքման ժամ" and refused[5]["message"] == "օրվա ժամ չէ՝ '25:00'"
    (kept,) = body["needsPin"]
    assert kept["row"] == 6 and kept["header"] == "Հասցե"
    assert kept["message"] == "հասցեն չկա հասցեների ցանկում. նշեք կետը քարտեզի վրա"

    orders = {
        o["externalRef"]: o for o in dispatch_client.get("/orders", headers=dispatcher.headers).json["orders"]
    }
    placed = orders["A-1"]
    assert placed["status"] == "ready" and placed["needsPin"] is None
    assert placed["addressDetails"]["apartment"] == "12"
    # "14:00-16:00" on the import's day, in Yerevan time
    assert placed["deliveryWindowStart"] == "2026-11-26T10:00:00.000Z"
    assert placed["deliveryWindowEnd"] == "2026-11-26T12:00:00.000Z"
    waiting = orders["A-5"]
    assert waiting["id"] == kept["orderId"] and waiting["status"] == "draft"
    assert waiting["needsPin"] == "the address is not in the address index: give lat and lon"


@pytest.mark.usefixtures("indexed_data_dir")
def test_a_russian_reader_reads_russian_and_without_a_language_the_messages_stay_english(
    dispatch_client, dispatcher
) -> None:
    sheet = "Получатель,Телефон,Адрес,Доставка с,Доставка до\nАнна,12,Abovyan 10,9:30,11:00\n"
    (problem,) = _import(dispatch_client, dispatcher.headers, sheet, "ru-RU,ru;q=0.9,en;q=0.5")["refused"]
    assert problem == {
        "row": 2,
        "column": "recipientPhone",
        "header": "Телефон",
        "message": "недействительный номер телефона: '12'",
    }
    (problem,) = _import(dispatch_client, dispatcher.headers, sheet, None)["refused"]
    assert problem["message"] == "not a valid phone number: '12'"

    fine = "Получатель,Телефон,Адрес,Доставка с,Доставка до\nАнна,091123456,Abovyan 10,9:30,11:00\n"
    assert _import(dispatch_client, dispatcher.headers, fine, "ru")["created"] == 1
    (order,) = dispatch_client.get("/orders", headers=dispatcher.headers).json["orders"]
    assert (order["deliveryWindowStart"], order["deliveryWindowEnd"]) == (
        "2026-11-26T05:30:00.000Z",
        "2026-11-26T07:00:00.000Z",
    )


@pytest.mark.usefixtures("indexed_data_dir")
def test_the_orders_listing_filters_on_needs_pin_and_refuses_any_other_word(
    dispatch_client, dispatcher
) -> None:
    _import(dispatch_client, dispatcher.headers, HY_SHEET, "hy")

    def listed(query: str) -> list[str]:
        answer = dispatch_client.get("/orders" + query, headers=dispatcher.headers)
        assert answer.status_code == 200, answer.json
        return sorted(o["externalRef"] for o in answer.json["orders"])

    assert listed("") == ["A-1", "A-5"]
    assert listed("?needsPin=true") == ["A-5"]
    assert listed("?needsPin=false") == ["A-1"]
    assert listed("?date=2026-11-26&needsPin=true&limit=1") == ["A-5"]
    assert listed("?date=2026-11-25&needsPin=true") == []
    for bad in ("yes", "1", "TRUE", "", "x" * 5000):
        answer = dispatch_client.get(f"/orders?needsPin={bad}", headers=dispatcher.headers)
        assert answer.status_code == 400, (bad, answer.json)
        assert answer.headers["Content-Type"] == "application/problem+json"
        assert answer.json["errors"][0]["field"] == "needsPin"


@pytest.mark.usefixtures("indexed_data_dir")
def test_another_companys_orders_needing_a_pin_are_not_listed(
    dispatch_app, dispatch_client, dispatcher
) -> None:
    from tests.dispatch.factory import make_company, make_member

    _import(dispatch_client, dispatcher.headers, HY_SHEET, "hy")
    stranger = make_member(dispatch_app, make_company(name="Other shop"), "dispatcher")
    answer = dispatch_client.get("/orders?needsPin=true", headers=stranger.headers)
    assert answer.status_code == 200 and answer.json["orders"] == []
