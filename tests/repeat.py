"""`make test-repeat N=5`: the integration suite run N times on one clone, then every
test that failed (or errored) in any run, with the runs it failed in, read from each
run's JUnit XML. Exit status 1 when any test failed in any run, 0 otherwise.

A flaky test is a defect; a single green run hides one that fails one time in five,
so this reads every run, not the last."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Tally:
    """What the runs said of the suite: how many runs, each test's outcomes."""

    runs: list[str] = field(default_factory=list)
    passed: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    failed: dict[str, list[tuple[str, str]]] = field(default_factory=lambda: defaultdict(list))
    missing: list[str] = field(default_factory=list)  # runs that left no report

    def failing(self) -> list[str]:
        return sorted(self.failed)


def read_runs(reports: list[Path]) -> Tally:
    tally = Tally()
    for report in reports:
        tally.runs.append(report.stem)
        if not report.exists() or report.stat().st_size == 0:
            tally.missing.append(report.stem)
            continue
        for case in ElementTree.parse(report).iter("testcase"):
            name = f"{case.get('classname', '')}::{case.get('name', '')}"
            problem = next((child for child in case if child.tag in ("failure", "error")), None)
            if problem is None:
                if not any(child.tag == "skipped" for child in case):
                    tally.passed[name] += 1
                continue
            first_line = (problem.get("message") or problem.text or "").strip().splitlines()
            tally.failed[name].append((report.stem, first_line[0][:200] if first_line else ""))
    return tally


def summary(tally: Tally) -> str:
    lines = [f"{len(tally.runs)} run(s) of the integration suite"]
    lines += [f"  {run}: no report (the run ended before pytest wrote one)"
              for run in tally.missing]
    if not tally.failed:
        lines.append(f"no test failed in any run ({len(tally.passed)} tests passed)")
        return "\n".join(lines)
    lines.append(f"{len(tally.failed)} test(s) failed in at least one run:")
    for name in tally.failing():
        failures = tally.failed[name]
        lines.append(f"  {name}: failed in {len(failures)} of {len(tally.runs)} "
                     f"({', '.join(run for run, _ in failures)})")
        lines += [f"      {run}: {message}" for run, message in failures]
    return "\n".join(lines)


def main(arguments: list[str]) -> int:
    tally = read_runs([Path(argument) for argument in arguments])
    print(summary(tally))
    return 1 if tally.failed or tally.missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
