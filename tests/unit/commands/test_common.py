"""What the commands share: here, the faults `run --fault` gives."""

from __future__ import annotations

import pytest

from vnetbench.commands.common import fault_fields, with_faults
from vnetbench.errors import UserError
from vnetbench.model.topology import parse_topology

TOPOLOGY = {"name": "t", "switches": 2, "agents": 4,
            "faults": [{"at": "1s", "link": "backbone", "for": "2s"}]}


def test_faults_given_replace_the_file_s_and_are_validated_as_its_would_be() -> None:
    topology = with_faults(parse_topology(TOPOLOGY, "t.yml"),
                           ["kill=switch2,restart_after=3s", "at=5s,loss=100%,for=2s"])
    assert [(f.kill, f.restart_after, f.loss, f.duration) for f in topology.faults] == [
        ("switch2", 3000.0, None, None), (None, None, 100.0, 2000.0)]
    assert topology.faults[1].at == 5000.0
    assert with_faults(topology, None) is topology  # none given: the file's stay
    with pytest.raises(UserError, match=r"(?s)--fault kill=switch9.*no switch named 'switch9'"):
        with_faults(topology, ["kill=switch9"])
    with pytest.raises(UserError, match=r"(?s)--fault .*one of kill, link, loss or delay"):
        with_faults(topology, ["at=1s"])


def test_a_fault_item_is_key_value_pairs() -> None:
    assert fault_fields(" kill=switch2 , restart_after=3s ") == {
        "kill": "switch2", "restart_after": "3s"}
    with pytest.raises(UserError, match=r"'kill' is not KEY=VALUE"):
        fault_fields("kill")
