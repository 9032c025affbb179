"""Parsing of the quantities that topology files carry: rates, times, ratios."""

import math
import re

_RATE_UNITS = {"bit": 1, "kbit": 10**3, "mbit": 10**6, "gbit": 10**9}
# tc's bytes-per-second spellings: refused, since most people writing 'mbps' mean
# megabits, and tc would read megabytes (8x more).
_BYTE_RATE_UNITS = {"bps": ("bit", "bytes"), "kbps": ("kbit", "kilobytes"),
                    "mbps": ("mbit", "megabytes"), "gbps": ("gbit", "gigabytes")}
_TIME_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1000.0}
_NUMBER = r"(\d+(?:\.\d+)?)"
_LONGEST_NUMBER = 30  # characters: no quantity vnetbench reads is written longer


def _checked(text: object, kind: str, example: str) -> str:
    """`text` as the string a parser matches: a list, a mapping or nothing (an empty
    `loss:`) is refused as a ValueError, which the model reports at its place (an
    AttributeError escaped it as a traceback)."""
    if not isinstance(text, str | int | float) or isinstance(text, bool):
        shown = "nothing" if text is None else f"{type(text).__name__} {str(text)[:40]}"
        raise ValueError(f"{shown} is not {kind}: write one value, e.g. '{example}'")
    return str(text)


def _number(digits: str, text: object) -> float:
    """The number a parser matched; an over-long one (float() reads '9' * 5000 as
    infinity, and int() of that raised OverflowError) is a ValueError."""
    if len(digits) > _LONGEST_NUMBER:
        raise ValueError(f"'{str(text)[:40]}...' is a number of {len(digits)} characters: "
                         f"no quantity here is written with more than {_LONGEST_NUMBER}")
    return float(digits)


def parse_rate(text: str | int | float) -> int:
    """'100mbit' -> 100_000_000 bits/s (tc's spelling). A number alone is refused,
    and so are tc's byte rates ('mbps' is megabytes per second there)."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        raise ValueError(f"'{text}' has no unit: write e.g. '{text}mbit' (or kbit, gbit, bit)")
    match = re.fullmatch(_NUMBER + r"\s*([a-z]+)",
                         _checked(text, "a rate", "100mbit").strip().lower())
    if match and match.group(2) in _BYTE_RATE_UNITS:
        number, unit = _number(match.group(1), text), match.group(2)
        bits_unit, bytes_name = _BYTE_RATE_UNITS[unit]
        raise ValueError(
            f"'{text}' is a byte rate in tc's spelling ({unit}: {bytes_name} per second, "
            f"{number * 8:g}{bits_unit}); write '{number:g}{bits_unit}' for "
            f"{number:g} {bits_unit}/s, or '{number * 8:g}{bits_unit}' if you meant {bytes_name}")
    if not match or match.group(2) not in _RATE_UNITS:
        raise ValueError(
            f"'{text}' is not a rate: write a number and one of "
            f"{', '.join(_RATE_UNITS)}, e.g. '100mbit'"
        )
    return int(_number(match.group(1), text) * _RATE_UNITS[match.group(2)])


def parse_milliseconds(text: str | int | float) -> float:
    """'10ms' -> 10.0; '1.5s' -> 1500.0. A number alone is refused (ms? s?)."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        raise ValueError(f"'{text}' has no unit: write e.g. '{text}ms' (or us, s)")
    match = re.fullmatch(_NUMBER + r"\s*(us|ms|s)",
                         _checked(text, "a duration", "10ms").strip().lower())
    if not match:
        raise ValueError(f"'{text}' is not a duration: write e.g. '10ms', '500us' or '1s'")
    return _number(match.group(1), text) * _TIME_UNITS[match.group(2)]


_BYTE_UNITS = {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9,
               "kib": 2**10, "mib": 2**20, "gib": 2**30}


def parse_bytes(text: str | int) -> int:
    """'100MiB' -> 104857600; '10MB' -> 10_000_000; a whole number is bytes."""
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    match = re.fullmatch(_NUMBER + r"\s*([a-z]*)",
                         _checked(text, "an amount of data", "100MiB").strip().lower())
    if not match or (match.group(2) or "b") not in _BYTE_UNITS:
        raise ValueError(f"'{text}' is not an amount of data: write e.g. '100MiB', "
                         "'10MB' or a number of bytes")
    return int(_number(match.group(1), text) * _BYTE_UNITS[match.group(2) or "b"])


def format_bytes(count: int) -> str:
    """104857600 -> '100MiB'; 4176084992 -> '3.9GiB' (exact where it is)."""
    for unit, factor in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count % factor == 0 and count:
            return f"{count // factor}{unit}"
        if count >= factor:
            return f"{count / factor:.1f}{unit}"
    return f"{count}B"


def exact_bytes(count: int) -> str:
    """104857600 -> '100MiB'; 1000000001 -> '1000000001B': the text parse_bytes reads
    back to the same count (what a copied topology must keep)."""
    for unit, factor in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count and count % factor == 0:
            return f"{count // factor}{unit}"
    return f"{count}B"


def format_milliseconds(milliseconds: float) -> str:
    """10.0 -> '10ms'; 0.1234567 -> '0.1234567ms' (%g's six digits where they are exact:
    a copied topology keeps its delays)."""
    for text in (f"{milliseconds:g}", repr(milliseconds), f"{milliseconds:.17f}".rstrip("0")):
        if "e" not in text and float(text) == milliseconds:
            return f"{text}ms"
    return f"{milliseconds:.17f}ms"


def parse_percent(text: str | int | float) -> float:
    """'1%' -> 1.0; a bare number is a percentage too."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        value = float(text)
    else:
        match = re.fullmatch(_NUMBER + r"\s*%?", _checked(text, "a percentage", "1%").strip())
        if not match:
            raise ValueError(f"'{text}' is not a percentage: write e.g. '1%' or '0.5%'")
        value = _number(match.group(1), text)
    if not 0 <= value <= 100:
        raise ValueError(f"'{text}' is not between 0% and 100%")
    return value


def format_rate(bits_per_second: int) -> str:
    """100_000_000 -> '100mbit' (the tc spelling, exact where possible)."""
    for unit, factor in (("gbit", 10**9), ("mbit", 10**6), ("kbit", 10**3)):
        if bits_per_second % factor == 0:
            return f"{bits_per_second // factor}{unit}"
    return f"{bits_per_second}bit"


# The token bucket's law (shaping/plan.py's tbf; the model checks a link's MTU fits it)
MIN_BURST_BYTES = 16 * 1024
BURST_SECONDS = 0.004  # 100 Mbit/s -> ~50 kB, 500 Mbit/s -> ~250 kB


def burst_bytes(rate: int) -> int:
    """The bucket of a rate (bit/s): 4 ms of it, 16 KiB at least."""
    return max(MIN_BURST_BYTES, math.ceil(rate / 8 * BURST_SECONDS))
