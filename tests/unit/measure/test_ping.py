"""run_ping: ping's arguments, raw output kept and parsed (the probe replaced)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vnetbench.measure import ping
from vnetbench.measure.ping import ping_argv, run_ping
from vnetbench.measure.probe import ProbeOutput


def test_ping_argv() -> None:
    assert ping_argv(200, 0.01, "10.0.1.2") == [
        "ping", "-c", "200", "-i", "0.01", "-W", "1", "10.0.1.2"]
    assert ping_argv(15, 1 / 3, "10.0.1.2", 1400) == [
        "ping", "-c", "15", "-i", "0.333", "-W", "1", "-s", "1400", "10.0.1.2"]


def fake_probe(monkeypatch: pytest.MonkeyPatch,
               text: str) -> list[tuple[str, str, list[str], float]]:
    calls: list[tuple[str, str, list[str], float]] = []

    def probe(run_id: str, target: str, argv: list[str], timeout: float) -> ProbeOutput:
        calls.append((run_id, target, argv, timeout))
        return ProbeOutput(0, text, "")

    monkeypatch.setattr(ping, "run_probe", probe)
    return calls


@pytest.mark.parametrize(("captured", "received"), [("ping-20.txt", 20), ("ping-dead.txt", 0)])
def test_run_ping(data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                  captured: str, received: int) -> None:
    text = (data_dir / captured).read_text()
    calls = fake_probe(monkeypatch, text)
    raw = tmp_path / "raw" / "ping-pass1.txt"
    run = run_ping("run1", "client-c", "10.0.1.2", 20, 0.01, None, raw, 16)
    assert calls == [("run1", "client-c", ping_argv(20, 0.01, "10.0.1.2"), 16)]
    assert raw.read_text() == text == run.raw
    assert run.error is None and run.result is not None
    assert run.result.received == received


def test_no_summary_is_the_error_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_probe(monkeypatch, "ping: connect: Network is unreachable\n")
    run = run_ping("run1", "client-c", "10.0.1.2", 5, 1, 1400, tmp_path / "p.txt", 16)
    assert run.result is None
    assert run.error is not None and run.error.startswith("no ping summary")
    assert (tmp_path / "p.txt").read_text() == run.raw
