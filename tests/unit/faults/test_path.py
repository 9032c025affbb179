"""Which faults are refused as off the measured path (vnetbench/faults/path.py): only
where the path is known before anything starts."""

from __future__ import annotations

import pytest

from vnetbench.faults.model import Fault
from vnetbench.faults.path import why_untouched

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
