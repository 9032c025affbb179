"""Parsing of the quantities that topology files carry: rates, times, ratios."""

import re

_RATE_UNITS = {
    "bit": 1,
    "kbit": 10**3,
    "mbit": 10**6,
    "gbit": 10**9,
    "bps": 8,
    "kbps": 8 * 10**3,
    "mbps": 8 * 10**6,
    "gbps": 8 * 10**9,
}
_TIME_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1000.0}
_NUMBER = r"(\d+(?:\.\d+)?)"


def parse_rate(text: str | int | float) -> int:
    """'100mbit' -> 100_000_000 bits/s (tc's spelling; 'mbps' means megabytes)."""
    if isinstance(text, int | float):
        return int(text)
    match = re.fullmatch(_NUMBER + r"\s*([a-z]+)", text.strip().lower())
    if not match or match.group(2) not in _RATE_UNITS:
        raise ValueError(
            f"'{text}' is not a rate: write a number and one of "
            f"{', '.join(_RATE_UNITS)}, e.g. '100mbit'"
        )
    return int(float(match.group(1)) * _RATE_UNITS[match.group(2)])


def parse_milliseconds(text: str | int | float) -> float:
    """'10ms' -> 10.0; '1.5s' -> 1500.0; a bare number is milliseconds."""
    if isinstance(text, int | float):
        return float(text)
    match = re.fullmatch(_NUMBER + r"\s*(us|ms|s)?", text.strip().lower())
    if not match:
        raise ValueError(f"'{text}' is not a duration: write e.g. '10ms', '500us' or '1s'")
    return float(match.group(1)) * _TIME_UNITS[match.group(2) or "ms"]


def parse_percent(text: str | int | float) -> float:
    """'1%' -> 1.0; a bare number is a percentage too."""
    if isinstance(text, int | float):
        value = float(text)
    else:
        match = re.fullmatch(_NUMBER + r"\s*%?", text.strip())
        if not match:
            raise ValueError(f"'{text}' is not a percentage: write e.g. '1%' or '0.5%'")
        value = float(match.group(1))
    if not 0 <= value <= 100:
        raise ValueError(f"'{text}' is not between 0% and 100%")
    return value


def format_rate(bits_per_second: int) -> str:
    """100_000_000 -> '100mbit' (the tc spelling, exact where possible)."""
    for unit, factor in (("gbit", 10**9), ("mbit", 10**6), ("kbit", 10**3)):
        if bits_per_second % factor == 0:
            return f"{bits_per_second // factor}{unit}"
    return f"{bits_per_second}bit"
