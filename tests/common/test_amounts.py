"""Amounts as people read them (appliance/common/amounts.py): exact, in the asset's units."""

from appliance.common.amounts import in_units


def test_wei_read_as_ether_with_every_decimal_and_no_trailing_zero() -> None:
    assert in_units("100249794103003503032", 18, "ETH") == "100.249794103003503032 ETH"
    assert in_units(2 * 10**15, 18, "ETH") == "0.002 ETH"
    assert in_units(0, 18, "ETH") == "0 ETH"


def test_large_whole_amounts_are_grouped_and_negative_ones_keep_their_sign() -> None:
    assert in_units(1_250_500_000, 6, "USDC") == "1 250.5 USDC"
    assert in_units(-5_000_000, 6, "USDC") == "-5 USDC"
    assert in_units(12345, 0, "AMD") == "12 345 AMD"
    assert in_units(None, 18, "ETH") == "—"
