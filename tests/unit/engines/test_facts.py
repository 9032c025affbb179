"""What rendering learns of this machine's engine (engines.engine_facts), asked once."""

from __future__ import annotations

import pytest


def test_the_engine_s_version_is_asked_once_a_process_once_it_answered(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Rendering a stack needs the engine's version: one `docker version` per process,
    not per stack; an engine that did not answer is asked again."""
    import vnetbench.engines as engines

    answers = [None, "27.5.1", "28.0.0"]
    asked: list[str | None] = []

    def version() -> str | None:
        asked.append(answers[len(asked)])
        return asked[-1]

    monkeypatch.setattr(engines, "engine_version", version)
    monkeypatch.setattr(engines, "_ANSWERED", [])
    assert engines.engine_facts().version is None  # no answer: not kept
    assert [engines.engine_facts().version for _ in range(3)] == ["27.5.1"] * 3
    assert asked == [None, "27.5.1"]
