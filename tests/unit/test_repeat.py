"""tests/repeat.py: every test that failed in any of N runs, from their JUnit XML."""

from __future__ import annotations

from pathlib import Path

from tests.repeat import main, read_runs, summary

CASE = '<testcase classname="tests.integration.{module}" name="{name}" time="1.0">{body}</testcase>'


def junit(path: Path, cases: list[tuple[str, str, str]]) -> Path:
    body = "".join(CASE.format(module=module, name=name, body=inner)
                   for module, name, inner in cases)
    path.write_text(f'<?xml version="1.0"?><testsuites><testsuite name="pytest">{body}'
                    "</testsuite></testsuites>")
    return path


def test_a_test_that_failed_in_one_run_of_three_is_named_with_that_run(
        tmp_path: Path) -> None:
    failure = '<failure message="AssertionError: assert 0.054 &gt;= 0.095">trace</failure>'
    skipped = '<skipped message="no netem"/>'
    runs = [junit(tmp_path / "run-1.xml", [("test_a", "test_one", ""), ("test_b", "test_two", "")]),
            junit(tmp_path / "run-2.xml", [("test_a", "test_one", failure),
                                           ("test_b", "test_two", "")]),
            junit(tmp_path / "run-3.xml", [("test_a", "test_one", ""),
                                           ("test_b", "test_two", skipped)])]
    tally = read_runs(runs)
    assert tally.failing() == ["tests.integration.test_a::test_one"]
    assert tally.failed["tests.integration.test_a::test_one"] == [
        ("run-2", "AssertionError: assert 0.054 >= 0.095")]
    assert tally.passed["tests.integration.test_b::test_two"] == 2  # the skip is no pass
    text = summary(tally)
    assert "test_a::test_one: failed in 1 of 3 (run-2)" in text
    assert main([str(run) for run in runs]) == 1


def test_errors_count_as_failures_and_a_clean_set_exits_zero(tmp_path: Path) -> None:
    error = '<error message="fixture setup failed">x</error>'
    assert read_runs([junit(tmp_path / "a.xml", [("m", "t", error)])]).failing() == [
        "tests.integration.m::t"]
    clean = [junit(tmp_path / f"run-{n}.xml", [("m", "t", "")]) for n in (1, 2)]
    assert main([str(run) for run in clean]) == 0
    assert "no test failed in any run" in summary(read_runs(clean))


def test_a_run_that_left_no_report_is_not_a_green_run(tmp_path: Path) -> None:
    (tmp_path / "run-2.xml").write_text("")
    runs = [junit(tmp_path / "run-1.xml", [("m", "t", "")]), tmp_path / "run-2.xml"]
    assert read_runs(runs).missing == ["run-2"]
    assert main([str(run) for run in runs]) == 1
