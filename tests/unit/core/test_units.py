import pytest

from vnetbench.core.units import format_rate, parse_milliseconds, parse_percent, parse_rate


@pytest.mark.parametrize(
    ("text", "bits"),
    [("100mbit", 100_000_000), ("1gbit", 10**9), ("1.5mbit", 1_500_000), ("64kbit", 64_000)],
)
def test_parse_rate(text: str, bits: int) -> None:
    assert parse_rate(text) == bits


@pytest.mark.parametrize("bad", ["fast", "100", "10 furlongs", "-5mbit"])
def test_parse_rate_rejects(bad: str) -> None:
    with pytest.raises(ValueError, match="not a rate"):
        parse_rate(bad)


def test_byte_rates_and_bare_numbers_are_refused_with_what_to_write() -> None:
    with pytest.raises(ValueError, match=r"'100mbps' is a byte rate .*800mbit.*'100mbit'"):
        parse_rate("100mbps")
    with pytest.raises(ValueError, match=r"'5000' has no unit: write e\.g\. '5000mbit'"):
        parse_rate(5000)
    with pytest.raises(ValueError, match=r"'10' has no unit: write e\.g\. '10ms'"):
        parse_milliseconds(10)


def test_parse_milliseconds() -> None:
    assert parse_milliseconds("10ms") == 10.0
    assert parse_milliseconds("500us") == 0.5
    assert parse_milliseconds("1.5s") == 1500.0
    with pytest.raises(ValueError):
        parse_milliseconds("-1ms")


def test_parse_percent() -> None:
    assert parse_percent("1%") == 1.0
    assert parse_percent("0.5") == 0.5
    with pytest.raises(ValueError):
        parse_percent("150%")


def test_format_rate_round_trips() -> None:
    for text in ("100mbit", "1gbit", "64kbit", "1500bit"):
        assert format_rate(parse_rate(text)) == text
