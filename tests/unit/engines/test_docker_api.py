"""The engine's API for the calls made per container: its listing read into the
interface's records (an entry the engine returned, recorded 2026-12-06), and its
errors as the engine's own (no engine: the client is pointed at no socket)."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import docker
import docker.errors
import pytest
import requests

from vnetbench.engines.base import EngineError
from vnetbench.engines.docker_api import api_client, api_execute, api_logs, listed_of

# `GET /containers/json` for one running container with a health check, as the engine
# answered it (its other keys left out)
RECORDED = {"Id": "82ffdaa99a2c079a4863e134657187de0479fa2e2e6f277cd9ded5f3385a0baa",
            "Names": ["/rec-api"], "Image": "vnetbench/tools:trixie", "Command": "sleep 60",
            "State": "running", "Status": "Up 3 seconds (healthy)",
            "Labels": {"vnetbench.context": "9fb1e6a56b96105f", "vnetbench.image": "tools",
                       "vnetbench.role": "probe", "vnetbench.run": "r1"}}


def test_a_listed_container_is_its_id_name_state_health_and_the_asked_labels() -> None:
    listed = listed_of(RECORDED, "node-a", ("vnetbench.run", "vnetbench.role",
                                            "vnetbench.node"))
    assert (listed.id, listed.name, listed.state, listed.health, listed.where) == (
        RECORDED["Id"], "rec-api", "running", "healthy", "node-a")
    # the labels asked for that it carries, no other (vnetbench.node: not carried)
    assert listed.labels == {"vnetbench.run": "r1", "vnetbench.role": "probe"}


def test_an_engine_that_does_not_answer_is_an_engine_error(tmp_path: Path) -> None:
    with pytest.raises(EngineError, match="the engine's API") as raised:
        api_client(f"unix://{tmp_path}/no.sock", 5)
    assert raised.value.exit_code == 1


class Answering:
    """The SDK's client as far as these calls go, answering as the engine did for a
    container that is not there (404, "No such container: c1")."""

    def __init__(self) -> None:
        response = requests.Response()
        response.status_code = 404
        self.missing = docker.errors.NotFound("404 Client Error", response=response,
                                              explanation="No such container: c1")

    def logs(self, container: str, **options: object) -> bytes:
        raise self.missing

    def exec_create(self, container: str, argv: list[str], **options: object) -> dict:
        raise self.missing


def test_a_missing_container_fails_a_log_and_its_exec_says_so_as_the_cli_did() -> None:
    api = cast(docker.APIClient, Answering())
    with pytest.raises(EngineError, match="No such container: c1") as raised:
        api_logs(api, "c1", None, False)
    assert raised.value.exit_code == 1
    ran = api_execute(api, "c1", ["true"])
    assert (ran.exit_code, ran.stdout, ran.stderr) == (1, "", "No such container: c1")


STATS = Path(__file__).parents[2] / "data" / "engine-stats"


def test_a_container_s_usage_from_its_engine_s_stats_is_the_cgroup_s_figures() -> None:
    """Recorded from this machine's engine (cgroup v1, `one_shot`): CPU is
    total_usage in ns; memory is usage less the inactive page cache (as usage.py's
    reading of the same cgroup), the peak max_usage."""
    import json

    from vnetbench.engines.docker_api import usage_of
    from vnetbench.engines.usage import MemoryReading

    stats = json.loads((STATS / "cgroup-v1-one-shot.json").read_text())
    used = usage_of(stats)
    assert used.cpu_seconds == 20915165 / 1e9
    assert used.memory == MemoryReading(393216, 4341760)
    stats["memory_stats"]["stats"]["total_inactive_file"] = 131072  # page cache
    assert usage_of(stats).memory == MemoryReading(393216 - 131072, 4341760)
    v2 = {"cpu_stats": stats["cpu_stats"],  # cgroup v2: no max_usage, inactive_file
          "memory_stats": {"usage": 1000, "stats": {"inactive_file": 300}}}
    assert usage_of(v2).memory == MemoryReading(700, None)
    assert usage_of({"cpu_stats": {}, "memory_stats": {}}) == type(used)(None, None)


def test_a_container_gone_has_no_usage_and_raises_nothing() -> None:
    from vnetbench.engines.docker_api import Usage, api_usage

    class Gone:
        def stats(self, *_args: object, **_kwargs: object) -> None:
            raise docker.errors.NotFound("No such container: x")

    assert api_usage(cast(docker.APIClient, Gone()), "x") == Usage(None, None)
