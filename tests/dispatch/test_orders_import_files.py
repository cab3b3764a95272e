"""Files an import cannot read get a clear 400, 413 or 415 Problem, never a 500, and create nothing."""

from __future__ import annotations

import io
import zipfile

import pytest

from appliance.dispatch.models import Order
from appliance.dispatch.orders import sheets
from tests.dispatch.import_helpers import HEADER, csv_bytes, post_csv, post_file, row, xlsx_bytes


def _problem(response, status: int, words: str) -> None:
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    assert words.lower() in response.json["detail"].lower(), response.json["detail"]
    assert Order.select().count() == 0


def test_a_file_in_another_encoding_is_400_saying_so(dispatch_client, dispatcher) -> None:
    data = (
        csv_bytes([row(1, recipientName="Получатель", addressLabelHy="Абовяна 1")]).decode().encode("cp1251")
    )
    _problem(post_csv(dispatch_client, dispatcher, data), 400, "not UTF-8")


def test_a_utf8_file_with_a_byte_order_mark_is_read(dispatch_client, dispatcher) -> None:
    response = post_csv(dispatch_client, dispatcher, b"\xef\xbb\xbf" + csv_bytes([row(1)]))
    assert response.status_code == 200 and response.json["created"] == 1


def test_a_binary_file_is_400(dispatch_client, dispatcher) -> None:
    _problem(post_file(dispatch_client, dispatcher, bytes(range(256)) * 10, "photo.jpg"), 400, "not text")


def test_an_old_xls_file_is_400_asking_for_xlsx(dispatch_client, dispatcher) -> None:
    data = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600
    _problem(post_file(dispatch_client, dispatcher, data, "orders.xls"), 400, ".xlsx")


def test_a_zip_that_is_no_workbook_is_400(dispatch_client, dispatcher) -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("hello.txt", "hello")
    _problem(post_file(dispatch_client, dispatcher, out.getvalue()), 400, "cannot be read as .xlsx")


def test_a_truncated_workbook_is_400(dispatch_client, dispatcher) -> None:
    data = xlsx_bytes([HEADER, list(row(1).values())])
    _problem(post_file(dispatch_client, dispatcher, data[: len(data) // 2]), 400, "cannot be read as .xlsx")


def test_a_workbook_with_a_formula_is_400_naming_the_cell(dispatch_client, dispatcher) -> None:
    values = list(row(1).values())
    values[3] = "=1000+1"
    _problem(
        post_file(dispatch_client, dispatcher, xlsx_bytes([HEADER, values])), 400, "cell D2 holds a formula"
    )


def test_a_workbook_that_unpacks_to_too_much_is_413(dispatch_client, dispatcher, monkeypatch) -> None:
    monkeypatch.setattr(sheets, "MAX_UNPACKED", 1000)
    data = xlsx_bytes([HEADER, *[list(row(n).values()) for n in range(1, 50)]])
    _problem(post_file(dispatch_client, dispatcher, data), 413, "unpacks")


def test_ten_megabytes_of_one_line_is_413(dispatch_client, dispatcher) -> None:
    _problem(post_csv(dispatch_client, dispatcher, b"a" * (10 * 1024 * 1024)), 413, "larger than")


def test_a_header_line_too_long_to_be_one_is_400(dispatch_client, dispatcher) -> None:
    _problem(post_csv(dispatch_client, dispatcher, b"a" * (1024 * 1024)), 400, "header row is too long")


def test_a_cell_too_long_is_400(dispatch_client, dispatcher) -> None:
    data = csv_bytes([row(1, noteToCourier="n" * 200_000)])
    _problem(post_csv(dispatch_client, dispatcher, data), 400, "row 2")


def test_a_hundred_thousand_rows_are_413(dispatch_client, dispatcher) -> None:
    data = ",".join(HEADER).encode() + b"\n" + b"1,a,091123456,1,b,40.1,44.5\n" * 100_000
    assert len(data) < sheets.MAX_BYTES
    _problem(post_csv(dispatch_client, dispatcher, data), 413, "at most 10,000")


def test_a_workbook_of_too_many_rows_is_413(dispatch_client, dispatcher, monkeypatch) -> None:
    monkeypatch.setattr(sheets, "MAX_ROWS", 5)
    data = xlsx_bytes([HEADER, *[list(row(n).values()) for n in range(1, 10)]])
    _problem(post_file(dispatch_client, dispatcher, data), 413, "at most 5")


def test_an_empty_body_is_400(dispatch_client, dispatcher) -> None:
    _problem(post_csv(dispatch_client, dispatcher, b""), 400, "empty")


def test_a_json_body_is_415(dispatch_client, dispatcher) -> None:
    _problem(post_csv(dispatch_client, dispatcher, b"{}", content_type="application/json"), 415, "text/csv")


def test_a_multipart_body_without_the_file_field_is_400(dispatch_client, dispatcher) -> None:
    response = dispatch_client.post(
        "/orders/import", data={"other": "x"}, content_type="multipart/form-data", headers=dispatcher.headers
    )
    _problem(response, 400, "field 'file'")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("recipientName,recipientPhone,lat,lon\nA,091123456,40.1,44.5\n", "addressLabelHy (or address)"),
        ("recipientName,recipientPhone,addressLabelHy,lat\nA,091123456,x,40.1\n", "lacks the columns lon"),
        ("recipientName,Получатель,recipientPhone,addressLabelHy\n", "twice"),
        (",,,\n1,2,3,4\n", "empty"),
    ],
)
def test_a_header_row_without_what_an_order_needs_is_400(dispatch_client, dispatcher, text, words) -> None:
    _problem(post_csv(dispatch_client, dispatcher, text.encode()), 400, words)


def test_broken_quoting_is_400_naming_the_row(dispatch_client, dispatcher) -> None:
    data = csv_bytes([row(1)]) + b'"SHOP-2,"Ani\n'
    _problem(post_csv(dispatch_client, dispatcher, data), 400, "row 3 cannot be read as CSV")


def test_a_nul_character_in_any_cell_is_refused_as_post_orders_refuses_it() -> None:
    from appliance.common.problems import BadRequest

    with pytest.raises(BadRequest, match="Row 3 has a cell with a NUL character"):
        sheets._check_cells([["recipientName"], ["Ani"], ["A\x00ni"]])
