"""Parsing what the docker CLI prints: container health from `docker ps`'s status
column, and `docker compose logs` lines (recorded output)."""

from __future__ import annotations

import pytest

from vnetbench.engines.docker import compose_log_line, health_of, project_log_texts


@pytest.mark.parametrize(("status", "health"), [
    ("Up 3 seconds (health: starting)", "starting"),
    ("Up 2 minutes (healthy)", "healthy"),
    ("Up 40 seconds (unhealthy)", "unhealthy"),
    ("Up 5 minutes", None),
    ("Exited (137) 2 seconds ago", None),
])
def test_health_from_the_status_column(status: str, health: str | None) -> None:
    assert health_of(status) == health


def test_compose_log_lines_name_their_container() -> None:
    line = ("\x1b[2Kp-20261130-100444-66aa-fabric          | 2026-11-30T10:04:45.076302170Z "
            "vnetbench-fabric: iptables-nft accepts 10.160.0.0/16 <-> 10.160.0.0/16\n")
    assert compose_log_line(line) == (
        "p-20261130-100444-66aa-fabric",
        "2026-11-30T10:04:45.076302170Z vnetbench-fabric: iptables-nft accepts "
        "10.160.0.0/16 <-> 10.160.0.0/16")
    assert compose_log_line("p-agent1  | 2026-11-30T10:04:45Z a | b\n")[1].endswith("a | b")
    assert compose_log_line("canceled\n") == ("", "")


def test_one_compose_logs_call_splits_into_each_container_s_log() -> None:
    output = ("p-fabric          | 2026-11-30T10:04:45.076302170Z vnetbench-fabric: up\n"
              "p-agent1          | 2026-11-30T10:04:45.100000000Z first\n"
              "p-other           | 2026-11-30T10:04:45.200000000Z not asked for\n"
              "p-agent1          | 2026-11-30T10:04:46.100000000Z a | b\n"
              "canceled\n")
    texts = project_log_texts(output, {"p-fabric", "p-agent1", "p-quiet"})
    assert texts == {
        "p-fabric": "2026-11-30T10:04:45.076302170Z vnetbench-fabric: up\n",
        "p-agent1": ("2026-11-30T10:04:45.100000000Z first\n"
                     "2026-11-30T10:04:46.100000000Z a | b\n")}  # in order, as docker logs


def test_detach_veths_asks_each_running_fabric_helper_only() -> None:
    """Teardown's batch veth deletion goes to the fabric helpers that run (an exited one
    cannot exec); an engine error there is no failure: the removal after removes all."""
    from types import SimpleNamespace

    from python_on_whales.exceptions import DockerException

    from vnetbench.engines.base import Listed
    from vnetbench.engines.docker import detach_veths

    asked: list[tuple[str, list[str]]] = []

    def execute(container: str, argv: list[str]) -> str:
        asked.append((container, argv))
        if container == "f2":
            raise DockerException(["docker", "exec"], 1)
        return ""

    client = SimpleNamespace(container=SimpleNamespace(execute=execute))
    role = "vnetbench.role"
    detach_veths(client, [  # type: ignore[arg-type]
        Listed("f1", "run1-fabric", "running", "healthy", {role: "fabric"}),
        Listed("f2", "run2-fabric", "running", "healthy", {role: "fabric"}),
        Listed("f3", "run3-fabric", "exited", None, {role: "fabric"}),
        Listed("a1", "run1-agent1", "running", None, {role: "agent"})])
    assert asked == [("f1", ["vnetbench-fabric", "detach"]),
                     ("f2", ["vnetbench-fabric", "detach"])]
