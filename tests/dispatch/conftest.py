"""The dispatch tests' common cast: a company (Arev) with a dispatcher and a courier, signed in.
A test module may define its own fixture of the same name for another cast."""

from __future__ import annotations

import pytest

from tests.dispatch.factory import make_company, make_member


@pytest.fixture
def company():
    return make_company("Arev")


@pytest.fixture
def dispatcher(dispatch_app, company):
    return make_member(dispatch_app, company, "dispatcher")


@pytest.fixture
def courier(dispatch_app, company):
    return make_member(dispatch_app, company, "courier")
