"""Problems in the reader's language (issue 46): ``detail`` and ``errors[].message`` in hy, ru or
en, from the signed-in user's language or ``Accept-Language``; ``type``, ``title``, ``code`` and
``errors[].field`` exactly as the API names them; a ``Retry-After`` said as a wait."""

from __future__ import annotations

import re

from appliance.dispatch.models import User
from appliance.dispatch.words import language, problem_texts
from tests.dispatch.orders_helpers import create_order


def _set_language(member, lang):
    User.update(language=lang).where(User.id == member.user.id).execute()


def test_a_validation_problem_reads_in_the_signed_in_users_armenian_and_keeps_the_field_names(
    dispatch_client, dispatcher
):
    _set_language(dispatcher, "hy")
    answer = dispatch_client.post("/couriers", json={"displayName": ""}, headers=dispatcher.headers)
    body = answer.get_json()
    assert answer.status_code in (400, 422)
    assert body["title"] in ("Bad Request", "Unprocessable Content", "Unprocessable Entity")
    assert body["detail"].startswith("Սխալ տվյալներ (body)՝ ")
    assert "displayName" in body["detail"]
    fields = {e["field"]: e["message"] for e in body["errors"]}
    assert "displayName" in fields
    assert all(not message.isascii() for message in fields.values()), fields


def test_a_conflict_reads_in_russian_for_a_russian_user(dispatch_client, dispatcher):
    _set_language(dispatcher, "ru")
    created = create_order(dispatch_client, dispatcher)
    answer = dispatch_client.post(f"/orders/{created['id']}/notify-late", json={}, headers=dispatcher.headers)
    assert answer.status_code == 409
    body = answer.get_json()
    assert body["detail"] == "Заказ не в пути."
    assert body["title"] == "Conflict"
    assert body["type"] == "about:blank#conflict"


def test_without_a_signed_in_user_accept_language_decides_and_english_is_the_default(dispatch_client):
    asked = {"refreshToken": "not-a-token-at-all"}
    hy = dispatch_client.post(
        "/auth/refresh", json=asked, headers={"Accept-Language": "hy-AM,hy;q=0.9,en;q=0.5"}
    )
    ru = dispatch_client.post("/auth/refresh", json=asked, headers={"Accept-Language": "de,ru;q=0.8"})
    en = dispatch_client.post("/auth/refresh", json=asked, headers={"Accept-Language": "de"})
    assert hy.status_code == ru.status_code == en.status_code == 401
    assert hy.get_json()["detail"] == "Թարմացման նշանն անվավեր է։"
    assert ru.get_json()["detail"] == "Токен обновления недействителен."
    assert en.get_json()["detail"] == "The refresh token is not valid."


def test_the_signed_in_users_language_wins_over_the_browsers_accept_language(dispatch_client, dispatcher):
    _set_language(dispatcher, "hy")
    headers = {**dispatcher.headers, "Accept-Language": "en-US,en;q=0.9"}
    answer = dispatch_client.get("/orders/999999", headers=headers)
    assert answer.status_code == 404
    assert answer.get_json()["detail"] == "Այդպիսի պատվեր չկա։"


def test_a_status_named_in_a_problem_is_named_in_the_language():
    text = "An order cannot move from delivered to ready."
    assert problem_texts.detail(text, "ru") == "Заказ не может перейти из «доставлен» в «готов»."
    assert problem_texts.detail(text, "en") == text


def test_accept_language_picks_the_best_of_the_three_languages():
    assert language.from_header("fr-CH, fr;q=0.9, ru;q=0.8, hy;q=0.7") == "ru"
    assert language.from_header("hy;q=0.5, ru;q=0.5") == "hy"
    assert language.from_header("ru;q=0, en") == "en"
    assert language.from_header("hyz, rum") is None
    assert language.from_header(None) is None


def test_a_rate_limited_answer_says_the_wait_in_the_readers_language(dispatch_client):
    answers = [
        dispatch_client.post(
            "/auth/magic-link", json={"email": "someone@example.am"}, headers={"Accept-Language": "ru"}
        )
        for _ in range(30)
    ]
    limited = [a for a in answers if a.status_code == 429]
    assert limited, [a.status_code for a in answers]
    body = limited[0].get_json()
    assert body["title"] == "Too Many Requests"
    said = re.fullmatch(r"Слишком много запросов\. Повторите через (\d+) (с|мин)\.", body["detail"])
    assert said, body["detail"]
    # The limiter writes its own header after the Problem: they may differ by the second between.
    seconds = int(limited[0].headers["Retry-After"])
    minutes = -(-seconds // 60)
    assert abs(int(said[1]) - (seconds if said[2] == "с" else minutes)) <= 1


# The import's findings are worded where they are made (orders/importing.py, sheets.py, cells.py);
# messages about the machine (routing engines, tiles, storage internals) are for the operator.
_NOT_COVERED = ("orders/importing.py", "orders/sheets.py", "orders/cells.py", "orders/workbook", "routing/",
                "geocoding/", "tiles/", "company/admin.py")  # fmt: skip
# The import's own Problems (POST /orders/import) are worded by the import (issue 46, another part).
_IMPORT_SENTENCES = {
    "The file is empty.",
    "Send the file as text/csv, or as multipart/form-data in the field 'file'.",
    "Send the file in the multipart field 'file'.",
}


def test_every_literal_problem_sentence_the_routes_raise_has_its_armenian_and_russian_wording():
    import ast
    from pathlib import Path

    import appliance.dispatch as dispatch
    from appliance.common import problems

    names = {cls.__name__ for cls in problems.ApiError.__subclasses__()} | {"ApiError"}
    root = Path(dispatch.__file__).parent
    missing = []
    for path in root.rglob("*.py"):
        where = path.relative_to(root).as_posix()
        if where.startswith(_NOT_COVERED):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and node.args):
                continue
            called = getattr(node.func, "id", getattr(node.func, "attr", None))
            first = node.args[0]
            if (
                called in names
                and isinstance(first, ast.Constant)
                and isinstance(first.value, str)
                and first.value not in _IMPORT_SENTENCES
            ):
                for lang in ("hy", "ru"):
                    if problem_texts.detail(first.value, lang) == first.value:
                        missing.append((where, lang, first.value))
    assert missing == []


def test_a_vague_later_gives_way_to_the_exact_wait(dispatch_app):
    from appliance.common import faults
    from appliance.common.problems import Unavailable
    from appliance.dispatch import problems

    streams = Unavailable("Too many event streams are open; retry shortly.", headers={"Retry-After": "5"})
    with dispatch_app.test_request_context(headers={"Accept-Language": "ru"}):
        assert (
            problems.render(streams, "r")["detail"] == "Открыто слишком много потоков. Повторите через 5 с."
        )
    with dispatch_app.test_request_context():
        body = problems.render(faults.problem("database_unavailable"), "r")
    assert body["detail"] == "The database cannot be reached right now: nothing was saved. Try again in 2 s."
    assert (body["title"], body["code"]) == ("Service Unavailable", "database_unavailable")
