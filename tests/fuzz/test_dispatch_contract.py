"""Requests generated from the dispatch service's own OpenAPI document, sent as an owner, a
dispatcher and a courier: never a 500, every answer's status, content type and body as documented."""

from __future__ import annotations

import pytest
import schemathesis

from tests.fuzz.contract import SETTINGS, document, send

pytestmark = pytest.mark.fuzz

schema = schemathesis.openapi.from_dict(document("dispatch"))


def _send(case, world, member) -> None:
    send("dispatch", case, world.app, member.headers)


@schema.parametrize()
@SETTINGS
def test_the_dispatch_service_keeps_its_contract_for_an_owner(case, dispatch_world) -> None:
    _send(case, dispatch_world, dispatch_world.owner)


@schema.parametrize()
@SETTINGS
def test_the_dispatch_service_keeps_its_contract_for_a_dispatcher(case, dispatch_world) -> None:
    _send(case, dispatch_world, dispatch_world.dispatcher)


@schema.parametrize()
@SETTINGS
def test_the_dispatch_service_keeps_its_contract_for_a_courier(case, dispatch_world) -> None:
    _send(case, dispatch_world, dispatch_world.courier)
