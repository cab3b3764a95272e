"""The day accounted (issue 28 item 4): report figures against a hand count of a 100-order day,
Armenian text through CSV and .xlsx, and one company never seeing another's orders."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json

import pytest
from click.testing import CliRunner
from python_calamine import CalamineWorkbook

from appliance.cli import cli
from appliance.dispatch.models import Collection, Order
from appliance.dispatch.models.orders import OrderEvent, Settlement
from appliance.dispatch.reports import service, writers
from tests.conftest import BACKEND
from tests.dispatch.factory import make_company, make_member

DAY = dt.date(2026, 11, 20)
# 09:00 in Yerevan (UTC+4) is 05:00 UTC.
NINE = dt.datetime(2026, 11, 20, 5, 0, tzinfo=dt.UTC)


def _order(company, n: int, **fields) -> Order:
    values = {
        "company": company,
        "public_id": f"T{company.id}-{n:05d}",
        "status": "created",
        "recipient_name": "Անի Պետրոսյան",
        "recipient_phone": "+37491000000",
        "address_hy": "Աբովյան 1",
        "lat": 40.18,
        "lon": 44.51,
        "created_at": NINE,
        "updated_at": NINE,
    }
    values.update(fields)
    return Order.create(**values)


def build_day(dispatch_app, company):
    """100 orders: for i in 0..99, couriers alternate (even i: A, odd i: B); by i % 10,
    0-6 delivered, 7 failed 'recipient_absent', 8 failed 'wrong_address', 9 cancelled; delivered orders
    with i % 10 == 6 have no window, the others' window ends at 11:00 and they are delivered at
    10:00, or at 12:00 (late) when i % 3 == 0; picked up 30 minutes before delivery for A and 20
    for B; i % 10 in (0, 1) are cash on delivery of 5,000 AMD, collected."""
    a = make_member(dispatch_app, company, "courier", name="Արամ")
    b = make_member(dispatch_app, company, "courier", name="Boris")
    owner = make_member(dispatch_app, company, "owner", name="Owner Anna")
    settlement = Settlement.create(
        company=company,
        courier=a.courier,
        status="confirmed",
        expected_amd=50_000,
        received_amd=50_000,
        shortfall_amd=0,
        submitted_at=NINE + dt.timedelta(hours=9),
        confirmed_at=NINE + dt.timedelta(hours=10),
        accepted_by=owner.user,
    )
    window_end = NINE + dt.timedelta(hours=2)
    for i in range(100):
        courier = (a if i % 2 == 0 else b).courier
        kind = i % 10
        cod = kind in (0, 1)
        fields: dict = {"courier": courier, "is_cod": cod, "cod_amount_amd": 5000 if cod else 0}
        if kind <= 6:
            finished = NINE + dt.timedelta(hours=3 if i % 3 == 0 else 1)
            fields.update(status="delivered", finished_at=finished)
            if kind != 6:
                fields["window_end"] = window_end
                fields["window_start"] = NINE
        elif kind in (7, 8):
            finished = NINE + dt.timedelta(hours=1)
            reason = "recipient_absent" if kind == 7 else "wrong_address"
            fields.update(status="failed", finished_at=finished, failure_reason=reason)
        else:
            fields.update(status="cancelled", courier=None, finished_at=NINE)
        order = _order(company, i, **fields)
        if fields["status"] == "delivered":
            before = dt.timedelta(minutes=30 if courier == a.courier else 20)
            OrderEvent.create(
                order=order,
                company=company,
                kind="status",
                from_status="assigned",
                to_status="picked_up",
                created_at=finished - before,
            )
            if cod:
                Collection.create(
                    company=company,
                    courier=courier,
                    order=order,
                    amount_amd=5000,
                    collected_at=finished,
                    settlement=settlement if courier == a.courier else None,
                )
    return a, b


@pytest.fixture
def day(dispatch_app, company):
    return build_day(dispatch_app, company)


def test_courier_figures_match_the_hand_count_of_the_day(day, company) -> None:
    figures = {
        f["courier"]: f
        for f in (f.as_dict() for f in service.courier_figures(company.id, DAY, DAY + dt.timedelta(1)))
    }
    # A (even i): delivered i % 10 in 0,2,4,6 -> 40; failed 8 -> 10 wrong_address.
    # B (odd i): delivered 1,3,5 -> 30; failed 7 -> 10 recipient_absent; 9 cancelled, not counted.
    # With a window: A 0,2,4 -> 30, B 1,3,5 -> 30; late where i % 3 == 0: 10 of each 30.
    assert figures["Արամ"] == {
        "courierId": day[0].courier.id,
        "courier": "Արամ",
        "deliveries": 40,
        "failures": 10,
        "failuresByReason": {"wrong_address": 10},
        "deliveredWithWindow": 30,
        "onTime": 20,
        "onTimeRate": 0.6667,
        "averagePickupToDeliveryMinutes": 30.0,
    }
    assert figures["Boris"]["deliveries"] == 30
    assert figures["Boris"]["failuresByReason"] == {"recipient_absent": 10}
    assert figures["Boris"]["onTime"] == 20
    assert figures["Boris"]["averagePickupToDeliveryMinutes"] == 20.0


def test_the_orders_and_cash_reports_hold_every_order_and_collection_of_the_day(day, company) -> None:
    header, rows = service.report("orders", company.id, DAY, DAY + dt.timedelta(1))
    orders = [dict(zip(header, r, strict=True)) for r in rows]
    assert len(orders) == 100
    assert sum(1 for o in orders if o["status"] == "cancelled") == 10
    assert orders[0]["created_at"] == dt.datetime(2026, 11, 20, 9, 0)  # Yerevan wall time

    header, rows = service.report("cash", company.id, DAY, DAY + dt.timedelta(1))
    everything = [dict(zip(header, r, strict=True)) for r in rows]
    cash = [c for c in everything if c["kind"] == "collection"]
    # i % 10 == 0 (A, 10 orders) and == 1 (B, 10 orders), 5,000 AMD each.
    assert sum(c["amount_amd"] for c in cash) == 100_000
    by_a = [c for c in cash if c["courier"] == "Արամ"]
    assert sum(c["amount_amd"] for c in by_a) == 50_000
    assert {c["settlement_status"] for c in by_a} == {"confirmed"}
    assert {c["settlement"] for c in cash if c["courier"] == "Boris"} == {""}
    # The handover once, on a row of its own: its amounts are never repeated on its orders' rows.
    assert all(c["received_amd"] == c["shortfall_amd"] == "" for c in cash)
    handovers = [c for c in everything if c["kind"] == "handover"]
    assert [(h["courier"], h["expected_amd"], h["received_amd"], h["confirmed_by"]) for h in handovers] == [
        ("Արամ", 50_000, 50_000, "Owner Anna")
    ]
    assert all(h["amount_amd"] == "" and h["order"] == "" for h in handovers)


def test_another_companys_orders_never_appear(dispatch_app, day, company) -> None:
    other = make_company("Other")
    _order(other, 1, status="created")
    nxt = DAY + dt.timedelta(1)
    _, rows = service.report("orders", company.id, DAY, nxt)
    assert all(not r[0].startswith(f"T{other.id}-") for r in rows)
    _, rows = service.report("orders", other.id, DAY, nxt)
    assert len(list(rows)) == 1
    assert service.courier_figures(other.id, DAY, nxt) == []


def test_orders_outside_the_yerevan_day_are_left_out(dispatch_app, company) -> None:
    # 23:30 the evening before in Yerevan is 19:30 UTC: not on DAY.
    _order(company, 1, created_at=dt.datetime(2026, 11, 19, 19, 30, tzinfo=dt.UTC))
    _order(company, 2, created_at=dt.datetime(2026, 11, 19, 20, 0, tzinfo=dt.UTC))
    _, rows = service.report("orders", company.id, DAY, DAY + dt.timedelta(1))
    assert [r[0] for r in rows] == [f"T{company.id}-00002"]


def test_armenian_text_round_trips_through_csv_with_a_bom_and_through_xlsx(tmp_path, day, company) -> None:
    header, rows = service.report("orders", company.id, DAY, DAY + dt.timedelta(1))
    data = b"".join(writers.csv_chunks(header, rows))
    assert data.startswith(b"\xef\xbb\xbf")
    read = list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))
    assert read[0][0] == "order"
    assert len(read) == 101
    assert read[1][8] == "Անի Պետրոսյան" and read[1][9] == "Աբովյան 1"

    header, rows = service.report("couriers", company.id, DAY, DAY + dt.timedelta(1))
    path = tmp_path / "couriers.xlsx"
    with path.open("wb") as out:
        assert writers.write_xlsx(out, "couriers", header, rows) == 2
    sheet = CalamineWorkbook.from_path(str(path)).get_sheet_by_index(0).to_python()
    assert sheet[0][0] == "Courier"  # headers for people (English by default)
    assert [r[0] for r in sheet[1:]] == ["Boris", "Արամ"]
    assert sheet[2][1] == 40


@pytest.mark.parametrize(
    ("start", "end"),
    [(DAY, DAY), (DAY, DAY - dt.timedelta(1)), (DAY, DAY + dt.timedelta(367))],
)
def test_an_empty_reversed_or_too_long_range_is_refused(dispatch_app, company, start, end) -> None:
    with pytest.raises(service.RangeError):
        service.report("orders", company.id, start, end)


def test_an_unknown_kind_is_refused(dispatch_app, company) -> None:
    with pytest.raises(service.RangeError):
        service.report("payroll", company.id, DAY, DAY + dt.timedelta(1))


@pytest.mark.skipif(BACKEND == "postgres", reason="the command reads the data directory's own databases")
def test_the_export_command_writes_the_file_and_prints_a_summary(
    dispatch_client, day, company, settings, tmp_path
) -> None:
    out = tmp_path / "couriers.xlsx"
    base = ["dispatch", "export", "--company", str(company.id), "--from", "2026-11-20",
            "--data-dir", settings.data_dir]  # fmt: skip
    done = CliRunner().invoke(
        cli, [*base, "--kind", "couriers", "--to", "2026-11-21", "--out", str(out), "--json"]
    )
    assert done.exit_code == 0, done.output
    summary = json.loads(done.stdout)
    assert summary["rows"] == 2 and summary["format"] == "xlsx"
    sheet = CalamineWorkbook.from_path(str(out)).get_sheet_by_index(0).to_python()
    assert [r[0] for r in sheet[1:]] == ["Boris", "Արամ"]
    armenian = CliRunner().invoke(
        cli, [*base, "--kind", "couriers", "--to", "2026-11-21", "--out", str(out), "--lang", "hy"]
    )
    assert armenian.exit_code == 0, armenian.output
    assert CalamineWorkbook.from_path(str(out)).get_sheet_by_index(0).to_python()[0][0] == "Առաքիչ"

    reversed_range = CliRunner().invoke(
        cli, [*base, "--kind", "orders", "--to", "2026-11-19", "--out", str(tmp_path / "o.csv")]
    )
    assert reversed_range.exit_code == 2
    assert "'to' must be after 'from'" in reversed_range.output
    assert not (tmp_path / "o.csv").exists()

    nobody = CliRunner().invoke(
        cli, ["dispatch", "export", "--company", "999", "--kind", "cash", "--from", "2026-11-20",
              "--to", "2026-11-21", "--out", str(tmp_path / "c.csv"), "--data-dir", settings.data_dir]
    )  # fmt: skip
    assert nobody.exit_code == 1
    assert "No company 999" in nobody.output
    assert not (tmp_path / "c.csv").exists()


def test_an_early_delivery_is_not_on_time_only_one_inside_the_window_is(dispatch_app, company) -> None:
    """Issue 46: on time means inside the window; early counted as on time before."""
    courier = make_member(dispatch_app, company, "courier", name="Anna").courier
    window = {"window_start": NINE + dt.timedelta(hours=2), "window_end": NINE + dt.timedelta(hours=5)}
    for n, hours in enumerate((1, 3, 6)):  # 10:00 early, 12:00 inside 11:00-14:00, 15:00 late
        _order(company, n, courier=courier, status="delivered", finished_at=NINE + dt.timedelta(hours=hours),
               **window)  # fmt: skip
    (figures,) = service.courier_figures(company.id, DAY, DAY + dt.timedelta(1))
    assert (figures.deliveries, figures.delivered_with_window, figures.on_time) == (3, 3, 1)
