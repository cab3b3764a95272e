"""The appliance's Flask remembers which views and hooks are plain functions."""

from __future__ import annotations

from appliance.common.webapp import _App


def test_a_plain_view_is_called_as_it_is_and_the_answer_is_remembered() -> None:
    app = _App(__name__)

    def view() -> str:
        return "ok"

    assert app.ensure_sync(view) is view
    assert app._sync[view] is view


def test_a_coroutine_view_is_still_handed_to_flasks_own_check() -> None:
    app = _App(__name__)

    async def view() -> str:
        return "ok"

    try:
        wrapped = app.ensure_sync(view)
    except RuntimeError as error:  # Flask without its async extra says so
        assert "async" in str(error)
    else:
        assert wrapped is not view


def test_a_callable_that_cannot_be_a_dictionary_key_is_checked_each_time() -> None:
    unhashable = _Unhashable()
    assert _App(__name__).ensure_sync(unhashable) is unhashable


class _Unhashable:
    __hash__ = None  # type: ignore[assignment]

    def __call__(self) -> str:
        return "ok"
