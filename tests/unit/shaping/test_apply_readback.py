"""A shaper's read-back whose output did not come back whole (make test, 2026-12-07: a
50-machine bring-up's exec began at its fourth section, the first three lost) is read
again, not a JSON traceback; lost every time, it is an EngineError naming the shaper.
The output is a real namespace's (tests/data/shaping/as-planned.txt); the engine is a
stand-in that hands it back, cut as that exec's was."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from vnetbench.engines.base import EngineError, ToolOutput
from vnetbench.shaping.apply import READ_BACK_TRIES, observe
from vnetbench.shaping.verify import SECTION, SECTIONS, ReadBackError, parse_seen

WHOLE = (Path(__file__).parents[2] / "data" / "shaping" / "as-planned.txt").read_text()
# what the failed exec gave: from the offloads' section on
CUT = WHOLE[WHOLE.index(SECTION, WHOLE.index(SECTION, WHOLE.index(SECTION) + 1) + 1)
            + len(SECTION):]


@dataclass
class Outputs:
    """An engine whose execs answer with `outputs` in turn."""

    outputs: list[str]
    asked: list[list[str]] = field(default_factory=list)

    def execute(self, container: str, argv: list[str]) -> ToolOutput:
        self.asked.append(argv)
        return ToolOutput(0, self.outputs.pop(0), "")


@dataclass
class Run:
    engine: Any


def test_the_recorded_output_has_every_section_and_the_cut_one_does_not() -> None:
    assert WHOLE.count(SECTION) == SECTIONS - 1
    assert parse_seen(WHOLE).qdiscs
    with pytest.raises(ReadBackError, match="3 of its 6 sections came back"):
        parse_seen(CUT)


@pytest.mark.parametrize("text", ["", "no sections at all", SECTION.join(["[", *[""] * 5])])
def test_an_output_not_whole_is_a_read_back_error(text: str) -> None:
    with pytest.raises(ReadBackError):
        parse_seen(text)


def test_a_cut_read_back_is_read_again() -> None:
    engine = Outputs([CUT, WHOLE])
    seen = observe(Run(engine), "RUN-shaper")  # type: ignore[arg-type]
    assert len(engine.asked) == 2 and seen == parse_seen(WHOLE)


def test_a_read_back_cut_every_time_names_the_shaper() -> None:
    engine = Outputs([CUT] * READ_BACK_TRIES)
    with pytest.raises(EngineError, match="reading back RUN-shaper's shaping: its output did "
                       "not come back whole 3 times"):
        observe(Run(engine), "RUN-shaper")  # type: ignore[arg-type]
    assert len(engine.asked) == READ_BACK_TRIES
