"""Which faults are refused as off the measured path (vnetbench/model/faults/path.py): only
where the path is known before anything starts."""

from __future__ import annotations

import pytest

from vnetbench.model.faults.declared import Fault
from vnetbench.model.faults.path import missed_at_run_time, why_untouched

SWITCHES = ("north", "east", "south", "west")
LOSS = Fault.model_validate({"at": "1s", "loss": "50%", "for": "2s"})
KILL = Fault.model_validate({"at": "1s", "kill": "south", "restart_after": "2s"})
SPLIT = Fault.model_validate({"at": "1s", "partition": [["north"], ["east", "south"]],
                              "for": "2s"})


@pytest.mark.parametrize(("fault", "ends", "overlay", "refused"), [
    (LOSS, ("north",), "baseline", True),  # one switch: the backbone is not crossed
    (LOSS, ("north",), "wireguard", True),  # whatever the overlay
    (LOSS, ("north", "east"), "baseline", False),
    (LOSS, ("north",), "vnet", False),  # vNet places its agents when they join
    (KILL, ("north", "east"), "baseline", True),
    (KILL, ("north", "south"), "baseline", False),
    (KILL, ("north", "east"), "openvpn", False),  # its first hub may relay the others
    (KILL, ("north", "east"), "vnet", False),
    (SPLIT, ("east", "south"), "baseline", True),  # both on one side
    (SPLIT, ("west", "east"), "baseline", True),  # west is in no set: reaches every side
    (SPLIT, ("north", "east"), "baseline", False),  # cut
    (SPLIT, ("east", "south"), "tinc", False),
], ids=lambda v: v.describe() if isinstance(v, Fault) else str(v))
def test_a_fault_is_refused_only_where_the_path_is_known_to_miss_it(
        fault: Fault, ends: tuple[str, ...], overlay: str, refused: bool) -> None:
    assert (why_untouched(fault, ends, SWITCHES, overlay) is not None) == refused


def test_where_vnet_placed_the_pair_on_one_switch_the_pass_says_the_backbone_fault_missed_it(
        ) -> None:
    """vNet's conductor picks each agent's switch: not refused before, said in the pass
    once the pair joined on one switch; joined across the backbone, nothing is said."""
    said = missed_at_run_time([LOSS], ("east",), SWITCHES, "vnet")
    assert said == ["faults.0 (50% loss on the backbone for 2s) missed the measured path "
                    "once the agents joined: every measured agent is on east, so no packet "
                    "of theirs crosses the backbone between switches; this pass measured no "
                    "fault"]
    assert missed_at_run_time([LOSS], ("east", "north"), SWITCHES, "vnet") == []
    assert missed_at_run_time([LOSS], ("east",), SWITCHES, "baseline") == []  # refused before
