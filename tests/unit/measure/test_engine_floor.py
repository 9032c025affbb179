"""The engine's floor: what its compose file asks the engine for."""

from __future__ import annotations

from pathlib import Path

import yaml

from vnetbench.measure.engine_floor import FLOOR_ROLE, compose_services, floor_compose
from vnetbench.runtime.labels import OWNER, ROLE, RUN


def test_sleeping_containers_on_one_labelled_network(tmp_path: Path) -> None:
    text = floor_compose("floor3-x", 3, "vnetbench/tools:trixie", "10.190.0.0/20")
    spec = yaml.safe_load(text)
    services = spec["services"]
    assert list(services) == ["c1", "c2", "c3"]
    for service in services.values():
        # init: a kill is answered at once, as vnetbench's own containers answer it
        assert service["command"] == ["sleep", "infinity"] and service["init"] is True
        assert service["networks"] == ["floor"]
        labels = service["labels"]
        assert labels[RUN] == "floor3-x" and labels[ROLE] == FLOOR_ROLE and labels[OWNER]
        assert "healthcheck" not in service  # the floor has no check: vnetbench's cost
    network = spec["networks"]["floor"]
    assert network["labels"][RUN] == "floor3-x" and network["labels"][OWNER]
    assert network["ipam"]["config"] == [{"subnet": "10.190.0.0/20"}]
    path = tmp_path / "compose.yml"
    path.write_text(text)
    assert compose_services(path) == 3
