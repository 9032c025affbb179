"""The workload model: phases, mixes and at-once events, validated as a topology is
(every problem at once, at its place, with what to do), from a file, a topology's
section or a shipped profile."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from vnetbench.errors import UserError
from vnetbench.model.topology import parse_topology
from vnetbench.model.workload import (
    Workload,
    load_workload,
    parse_workload,
    profile_names,
    workload_from,
)


def phase(name: str = "steady", seconds: float = 60, **parts: Any) -> dict[str, Any]:
    parts.setdefault("mix", [{"name": "poll", "size": "20KiB", "rate": 0.1}])
    return {"name": name, "seconds": seconds, **parts}


def problems(data: Any) -> str:
    with pytest.raises(UserError) as caught:
        parse_workload(data, "w.yml")
    assert caught.value.exit_code == 2
    return str(caught.value)


def test_a_workload_reads_sizes_with_units_and_lays_phases_end_to_end() -> None:
    workload = parse_workload({"phases": [
        phase("statement", 30, mix=[], at_once=[{"name": "statement", "size": "2MiB"}]),
        phase("steady", 60, mix=[{"name": "submit", "size": "2KiB", "rate": 0.01,
                                  "connection": "new"},
                                 {"name": "poll", "size": 20480, "rate": 0.1}])]}, "w.yml")
    assert workload.seconds == 90
    assert workload.sizes == (2048, 20480, 2 * 2**20)
    assert workload.phases[0].at_once[0].at_s == 0
    assert workload.phases[1].mix[0].connection == "new"
    assert workload.phases[1].mix[1].connection is None


def test_every_problem_is_reported_at_once_each_at_its_place() -> None:
    said = problems({"phases": [
        phase("a", 0),
        phase("b", 10, mix=[{"name": "poll", "size": "20KiB", "rate": 0}]),
        phase("c", 10, mix=[], at_once=[{"name": "burst", "at_s": 10, "size": "2MiB"}]),
        phase("d", 10, mix=[], at_once=[{"name": "huge", "size": "17MiB"}]),
    ]})
    assert "(4 problem(s))" in said
    assert "  - phases.0.seconds: " in said
    assert "  - phases.1.mix.0.rate: a rate of 0 requests per second" in said
    # a phase's own coherence is checked even while other phases have errors
    assert "  - phases.2: at_once 'burst' at 10 s is not within the phase's 10 s" in said
    assert "  - phases.3.at_once.0.size: 17MiB is more than the 16MiB" in said
    assert "give at most 16MiB" in said
    assert said.endswith("Fix these in the file and run again.")


def test_an_event_outside_its_phase_and_an_empty_phase_are_refused_with_the_fix() -> None:
    said = problems({"phases": [
        phase("a", 10, mix=[], at_once=[{"name": "late", "at_s": 12, "size": 100}]),
        phase("b", 10, mix=[])]})
    assert "phases.0: Value error" not in said
    assert "at_once 'late' at 12 s is not within the phase's 10 s: give at_s below 10" in said
    assert "phases.1: the phase asks nothing" in said


def test_names_repeated_are_refused_where_they_would_name_two_figures() -> None:
    said = problems({"phases": [
        phase("a", at_once=[{"name": "burst", "size": 100}],
              mix=[{"name": "poll", "size": 1, "rate": 1}, {"name": "poll", "size": 2,
                                                             "rate": 1}]),
        phase("a", at_once=[{"name": "burst", "size": 100}])]})
    assert "the kinds' names must be unique: poll repeated" in said
    # the workload's own checks run once its phases are valid: the first phase is not
    assert "phases' names must be unique" not in said
    said = problems({"phases": [phase("a", at_once=[{"name": "burst", "size": 100}]),
                                phase("a", at_once=[{"name": "burst", "size": 100}])]})
    assert "the phases' names must be unique: a repeated" in said
    assert "the at_once events' names must be unique over the workload: burst" in said


def test_names_unknown_keys_and_bad_amounts_say_what_to_write() -> None:
    said = problems({"phases": [{"name": "Steady Phase", "seconds": 10, "mixx": [],
                                 "at_once": [{"name": "b", "size": "2 megs"}]}]})
    assert "phases.0.name: 'Steady Phase' is not a usable name" in said
    assert "e.g. 'steady-phase'" in said
    assert "phases.0.mixx: Extra inputs are not permitted" in said
    assert "'2 megs' is not an amount of data: write e.g. '100MiB'" in said


def test_not_a_mapping_is_refused_with_an_example() -> None:
    assert "a workload must be a YAML mapping with 'phases'" in problems(["a"])
    assert "phases: Field required" in problems({})
    assert "phases: none given" in problems({"phases": []})


def test_a_file_is_read_and_its_syntax_errors_say_where(tmp_path: Path) -> None:
    good = tmp_path / "w.yml"
    good.write_text("phases:\n  - {name: a, seconds: 5, at_once: [{name: b, size: 1KiB}]}\n")
    assert load_workload(good).sizes == (1024,)
    assert workload_from(str(good)).seconds == 5
    broken = tmp_path / "broken.yml"
    broken.write_text("phases:\n  - name: a\n   seconds: 5\n")
    with pytest.raises(UserError, match=r"is not valid YAML at line 3"):
        load_workload(broken)
    with pytest.raises(UserError, match="There is no workload file at"):
        load_workload(tmp_path / "absent.yml")


def test_an_unknown_profile_names_the_shipped_ones() -> None:
    with pytest.raises(UserError, match="no workload profile named 'nope'") as caught:
        workload_from("nope")
    assert ", ".join(profile_names()) in str(caught.value)


TOPOLOGY = {"name": "room", "switches": 2, "agents": 2}


def test_a_topology_section_is_validated_with_the_topology_at_its_path() -> None:
    with pytest.raises(UserError) as caught:
        parse_topology({**TOPOLOGY, "agent_pool": 0,
                        "workload": {"phases": [phase("a", -1)]}}, "t.yml")
    said = str(caught.value)
    assert "t.yml is not a valid topology (2 problem(s))" in said
    assert "  - agent_pool: " in said
    assert "  - workload.phases.0.seconds: " in said


def test_a_topology_without_workload_has_none_and_its_workload_is_not_its_stack() -> None:
    plain = parse_topology(TOPOLOGY, "t.yml")
    assert plain.workload is None
    loaded = parse_topology({**TOPOLOGY, "workload": {"phases": [phase()]}}, "t.yml")
    assert isinstance(loaded.workload, Workload)
    assert loaded.stack_key() == plain.stack_key()


def test_a_topology_names_a_profile_or_is_told_which_exist() -> None:
    with pytest.raises(UserError, match=r"workload: .*no workload profile named 'nope'"):
        parse_topology({**TOPOLOGY, "workload": "nope"}, "t.yml")


ROOT = Path(__file__).resolve().parents[3]


def test_the_contest_profile_is_a_statement_burst_steady_work_and_an_end_rush() -> None:
    contest = workload_from("contest")
    assert "contest" in profile_names()
    assert contest.name == "contest" and contest.timeout_s == 60
    statement, steady, rush = contest.phases
    assert (statement.name, steady.name, rush.name) == ("statement", "steady", "end-rush")
    assert [(e.at_s, e.size) for e in statement.at_once] == [(0, 2 * 2**20)]
    kinds = {k.name: k for k in steady.mix}
    assert set(kinds) == {"submission", "scoreboard"}
    assert 1024 <= kinds["submission"].size <= 8 * 1024  # "a few kB"
    rush_kinds = {k.name: k for k in rush.mix}
    assert rush_kinds["submission"].rate > kinds["submission"].rate
    assert rush_kinds["submission"].rate <= 1 / 60  # judges' limit near one a minute


def test_the_contest_profile_s_numbers_are_the_ones_its_documentation_gives() -> None:
    """docs/reference/scenarios/room.md's table names each phase's length, rates and sizes."""
    docs = (ROOT / "docs" / "reference" / "scenarios" / "room.md").read_text()
    table = docs[docs.index("**The `contest` profile**"):]
    table = table[:table.index("\n\n", table.index("| phase |"))]
    for phase_ in workload_from("contest").phases:
        row = next(line for line in table.splitlines() if line.startswith(f"| `{phase_.name}`"))
        assert f"| {phase_.seconds:g} |" in row
        for kind in phase_.mix:
            assert f"{kind.size // 1024} KiB" in row, (phase_.name, kind.name)
            if kind.name == "submission":
                assert f"{kind.rate:g}/s" in row
            else:
                assert f"every {1 / kind.rate:.0f} s" in row, (phase_.name, kind.name)
        assert all(f"{e.size // 2**20} MiB" in row for e in phase_.at_once)


def test_the_profile_is_shipped_in_the_package() -> None:
    import vnetbench

    shipped = Path(vnetbench.__file__).parent / "data" / "workloads" / "contest.yml"
    assert shipped.is_file()
    assert load_workload(shipped) == workload_from("contest")


@pytest.mark.parametrize("section", [[], 3, True, "../data/workloads/contest", ""])
def test_a_topology_section_neither_phases_nor_a_profile_s_name_says_what_to_give(
        section: Any) -> None:
    with pytest.raises(UserError, match=r"  - workload: .*(no workload profile named|is no "
                       r"workload: give a mapping with phases)"):
        parse_topology({**TOPOLOGY, "workload": section}, "t.yml")


def test_kinds_and_events_over_https_and_uploads_are_targets_of_the_generator() -> None:
    """A kind downloads `size` or uploads `upload` bytes, over http (the default) or
    https; the server's files are the downloads' sizes only, the generator's targets
    every request ("[s][u]BYTES"), a plain workload's targets being its sizes."""
    workload = parse_workload({"phases": [
        phase("start", 10, mix=[], at_once=[{"name": "statement", "size": "2MiB",
                                              "scheme": "https"}]),
        phase("steady", 10, mix=[
            {"name": "submission", "upload": "4KiB", "rate": 0.01, "scheme": "https"},
            {"name": "scoreboard", "size": "20KiB", "rate": 0.03, "scheme": "https"},
            {"name": "plain", "size": 100, "rate": 1},
            {"name": "plain-upload", "upload": 100, "rate": 1}])]}, "w.yml")
    assert workload.sizes == (100, 20480, 2 * 2**20)
    assert workload.targets == ("100", "s20480", "s2097152", "su4096", "u100")
    assert workload.https
    kinds = {k.name: k for k in workload.phases[1].mix}
    assert kinds["plain"].scheme == "http" and kinds["plain"].upload is None
    plain = parse_workload({"phases": [phase()]}, "w.yml")
    assert plain.targets == ("20480",) and not plain.https


def test_a_workload_with_uploads_reads_back_from_its_own_dump() -> None:
    """A topology is dumped and read again on its way to a pass (the room's settings):
    an upload's kind gives its size as None then, which is no size to bound."""
    workload = parse_workload({"phases": [phase("steady", 10, mix=[
        {"name": "submission", "upload": "4KiB", "rate": 0.01, "scheme": "https"}])]},
        "w.yml")
    again = type(workload).model_validate(workload.model_dump())
    assert again == workload and again.phases[0].mix[0].size is None


@pytest.mark.parametrize(("kind", "said"), [
    ({"size": 1, "upload": 1}, "kind 'k' gives both of size and upload: give size for a "
     "download"),
    ({}, "kind 'k' gives neither of size and upload"),
    ({"upload": "17MiB"}, "mix.0.upload: an upload of 17MiB is more than the 16MiB the "
     "room's server accepts"),
    ({"upload": 0}, "mix.0.upload: "),
    ({"size": 1, "scheme": "ftp"}, "mix.0.scheme: Input should be 'http' or 'https'"),
])
def test_a_kind_asking_neither_or_both_or_out_of_bounds_is_refused_naming_the_fix(
        kind: dict[str, Any], said: str) -> None:
    found = problems({"phases": [phase(mix=[{"name": "k", "rate": 1, **kind}])]})
    assert said in found and found.count("\n  - ") == 1


def test_an_event_s_scheme_is_checked_and_it_uploads_nothing() -> None:
    said = problems({"phases": [phase(at_once=[{"name": "e", "size": 1, "scheme": "tls"}]),
                                phase("b", at_once=[{"name": "f", "upload": 1}])]})
    assert "phases.0.at_once.0.scheme: Input should be 'http' or 'https'" in said
    assert "phases.1.at_once.0.size: Field required" in said
    assert "phases.1.at_once.0.upload: Extra inputs are not permitted" in said


def test_more_than_36_targets_are_refused_counting_schemes_and_uploads() -> None:
    mix = [{"name": f"k{n}", "size" if n % 2 else "upload": n + 1, "rate": 1,
            "scheme": "https" if n % 4 < 2 else "http"} for n in range(10)]
    phases = [phase(f"p{p}", mix=[{**k, "size" if "size" in k else "upload": k.get(
        "size", k.get("upload")) + 100 * p} for k in mix]) for p in range(4)]
    said = problems({"phases": phases})
    assert "phases: 40 different requests (reply sizes and uploads, by scheme) are more " \
           "than 36" in said


def test_the_contest_https_profile_is_the_contest_s_over_https_with_uploads() -> None:
    """The same phases, lengths, rates and sizes as `contest`; every request over
    HTTPS, and each submission an upload of the size contest downloads."""
    plain, https = workload_from("contest"), workload_from("contest-https")
    assert "contest-https" in profile_names() and https.timeout_s == plain.timeout_s
    for ours, theirs in zip(https.phases, plain.phases, strict=True):
        assert (ours.name, ours.seconds) == (theirs.name, theirs.seconds)
        assert [(e.name, e.at_s, e.size, e.scheme) for e in ours.at_once] == [
            (e.name, e.at_s, e.size, "https") for e in theirs.at_once]
        kinds = {k.name: k for k in theirs.mix}
        for kind in ours.mix:
            assert kind.scheme == "https" and kind.rate == kinds[kind.name].rate
            if kind.name == "submission":
                assert kind.upload == kinds[kind.name].size and kind.size is None
            else:
                assert kind.size == kinds[kind.name].size and kind.upload is None
