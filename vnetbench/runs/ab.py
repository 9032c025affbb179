"""`vnetbench ab`: two variants of the system under test measured in one session,
their bring-ups interleaved (A B, B A, A B, ..., or each round's order at random),
judged pair by pair.

A variant ("arm") is the topology with a few changes: another overlay, other vNet
images, other overlay options, other link settings or scenario settings, or a
whole other topology file. Every bring-up is a run of its own under `runs/`; the
rows of all of them go to one results set, `variant` naming the arm (A or B) and
`var_round` the round. With no B given, B is A: an A/A, whose pairs give this
machine's run-to-run noise per metric (noise.json), read by `compare --noise`.
Why pairs of bring-ups and which test: vnetbench/analysis/stats.py, "A/B over interleaved
bring-ups".
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
import yaml
from pydantic import BaseModel, Field, ValidationError, model_validator

from vnetbench.analysis.results import ResultSet, load_results
from vnetbench.analysis.runrecord import RunRecord, new_record, recorded
from vnetbench.analysis.sequential import SequentialPlan, plan_for
from vnetbench.analysis.stats import MIN_PAIRS
from vnetbench.core.schema import ROUND, Variant
from vnetbench.core.yamlfile import load_yaml
from vnetbench.engines import ENGINE_NAMES
from vnetbench.errors import UserError
from vnetbench.model.topology import Topology, load_topology, setting_fields
from vnetbench.overlays import OVERLAY_NAMES, Overlay, check_overlay_options, overlay_for
from vnetbench.overlays.vnet.artifacts import with_vnet_options
from vnetbench.report.ab import (
    close_metrics,
    outside_load_by_arm,
    verdict_table,
    write_verdicts,
)
from vnetbench.runs.comparison import require_overlays
from vnetbench.runs.session import run_scenarios
from vnetbench.runtime.rundir import new_directory, stamp
from vnetbench.scenarios import Scenario
from vnetbench.shaping.assign import SEGMENTS, parse_assignment, with_link_setting
from vnetbench.terminal.ui import note

ARMS = ("A", "B")
DEFAULT_ROUNDS = 8  # the exact test's smallest p at 8 pairs is 2/256: room for one odd round
MOST_ROUNDS = 100
Order = Literal["alternate", "random"]
ORDERS: tuple[Order, ...] = ("alternate", "random")
SPEC_HELP = ("KEY=VALUE, repeatable: overlay=NAME, topology=FILE, a setting (tunnel_mtu=1280, "
             "encryption=false, ...), SEGMENT.KEY=VALUE for a link (backbone.rate=90mbit), "
             "option.OVERLAY.KEY=VALUE for overlay_options, vnet-image=[ROLE=]IMAGE, "
             "vnet-profile=FILE")


class AbSession(BaseModel):
    """The bounds of an ab session's own numbers (the arms' settings are Settings')."""

    # a verdict needs MIN_PAIRS: below, the exact signed-rank test cannot reach p < 0.05
    rounds: int = Field(DEFAULT_ROUNDS, ge=MIN_PAIRS, le=MOST_ROUNDS)  # 200 bring-ups at most
    # confirming a verdict near the line (vnetbench/analysis/sequential.py): twice `rounds` unless
    # given, at most MOST_ROUNDS; None with confirmation off
    max_rounds: int | None = Field(None, ge=MIN_PAIRS, le=MOST_ROUNDS)
    confirm: bool = True
    # each round's order: A B, B A, ... ("alternate"), or a fair coin per round ("random":
    # each pair's sign is then random whatever the machine does in time, which is what
    # the exact test assumes; docs/studies/2026-12-ab.md, "Where the false verdicts come from")
    order: Order = "alternate"
    seed: int = Field(default_factory=lambda: secrets.randbelow(2**31))

    @model_validator(mode="after")
    def confirm_after_the_planned_rounds(self) -> AbSession:
        if self.confirm and self.max_rounds is not None and self.max_rounds < self.rounds:
            raise ValueError(f"--max-rounds {self.max_rounds} is below --rounds {self.rounds}")
        return self

    @property
    def most_rounds(self) -> int:
        """The rounds a session may reach when confirming: --max-rounds, else twice
        --rounds (the worst case doubles the session; docs/ab.md says why)."""
        return self.max_rounds or min(2 * self.rounds, MOST_ROUNDS)

    def plan(self) -> SequentialPlan | None:
        """The group-sequential plan, or None (confirmation off: the fixed design)."""
        return plan_for(self.rounds, self.most_rounds) if self.confirm else None


def ab_session(rounds: int, max_rounds: int | None = None, confirm: bool = True,
               order: Order = "alternate") -> AbSession:
    """--rounds and --max-rounds within AbSession's bounds, else one paragraph naming
    the option."""
    if max_rounds is not None and not confirm:
        raise UserError(f"--max-rounds {max_rounds} with --no-confirm: --max-rounds bounds "
                        "the rounds confirmation adds, and --no-confirm adds none. Give one "
                        "of the two.")
    try:
        return AbSession(rounds=rounds, max_rounds=max_rounds, confirm=confirm, order=order)
    except ValidationError as error:
        problem = error.errors()[0]
        said = str(problem["msg"]).lower().removeprefix("value error, ")
        if problem["loc"] == ("max_rounds",):
            raise UserError(f"--max-rounds {max_rounds}: {said}: confirming a verdict adds "
                            f"rounds up to this bound, from --rounds up to {MOST_ROUNDS}. "
                            f"Give e.g. --max-rounds {2 * DEFAULT_ROUNDS}, or --no-confirm."
                            ) from None
        if problem["loc"] == ("rounds",):
            raise UserError(f"--rounds {rounds}: {said}: a verdict needs {MIN_PAIRS} rounds "
                            "or more (the exact signed-rank test cannot reach p < 0.05 with "
                            f"fewer pairs), and a session of more than {MOST_ROUNDS} rounds is "
                            "better split. Give e.g. --rounds 8.") from None
        raise UserError(f"{said}: confirmation adds rounds after --rounds, so --max-rounds "
                        "must be at least --rounds. Give a larger --max-rounds, or "
                        "--no-confirm.") from None


@dataclass(frozen=True)
class Arm:
    label: str  # A or B
    spec: tuple[str, ...]  # what was given, KEY=VALUE each
    topology: Topology

    @property
    def description(self) -> str:
        return " ".join(self.spec) or "the topology as it is"


def arm_topology(base: Topology, spec: Sequence[str], option: str,
                 command_line: Mapping[str, Any] | None = None) -> Topology:
    """The base topology with one arm's changes, each validated like the file itself;
    a `topology=FILE` item replaces the base first, wherever it stands, read with the
    command line's settings as the base was (`command_line`), so the arms differ only
    in what the arm asked."""
    items = sorted(spec, key=lambda item: not item.startswith("topology="))
    topology = base
    given: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UserError(f"{option} {item} is not KEY=VALUE. Give {SPEC_HELP}.")
        if key.strip() in given and key.strip() != "vnet-image":  # (images add up, as
            # --vnet-image's do); another key given twice: the later would win unsaid
            raise UserError(f"{option} {given[key.strip()]} and {option} {item}: the arm "
                            f"sets {key.strip()} twice. Give each key once in an arm.")
        given[key.strip()] = item
        topology = changed(topology, key.strip(), value.strip(), f"{option} {item}",
                           command_line or {})
    check_arm_runs_what_it_sets(topology, items, option)
    return topology


def check_arm_runs_what_it_sets(topology: Topology, items: Sequence[str], option: str) -> None:
    """An overlay's option or a vNet image for an overlay the arm does not run, and a
    vNet role's image given twice, would be ignored (the later image silently winning):
    refused before anything starts."""
    roles: dict[str, str] = {}
    for item in items:
        key, _, value = (part.strip() for part in item.partition("="))
        overlay = ("vnet" if key in ("vnet-image", "vnet-profile") else
                   key.split(".")[1] if key.startswith("option.") and key.count(".") == 2
                   else None)
        if overlay is not None and overlay != topology.overlay:
            raise UserError(f"{option} {item}: the arm runs {topology.overlay}, not "
                            f"{overlay}, so it would be ignored. Give the arm "
                            f"overlay={overlay} too, or leave it out.")
        if key == "vnet-image":
            role = value.partition("=")[0] if "=" in value else "every role"
            if role in roles:
                raise UserError(f"{option} {roles[role]} and {option} {item}: the arm gives "
                                f"{role}'s vNet image twice, and the later would win unsaid. "
                                "Give each role's image once.")
            roles[role] = item


def changed(topology: Topology, key: str, value: str, source: str,
            command_line: Mapping[str, Any]) -> Topology:
    """One change of an arm (source names it in errors)."""
    if key == "topology":
        return arm_file(Path(value), command_line, source)
    if key == "overlay":
        if value not in OVERLAY_NAMES:
            raise UserError(f"{source}: no overlay named {value!r}; vnetbench has "
                            f"{', '.join(OVERLAY_NAMES)}.")
        return topology.model_copy(update={"overlay": value})
    if key == "vnet-image":
        return with_vnet_options(topology, [value], None)
    if key == "vnet-profile":
        return with_vnet_options(topology, None, Path(value))
    if key.partition(".")[0] in SEGMENTS or key.startswith("agent:"):
        return with_link(topology, key, value, source)
    if key.startswith("option."):
        return with_overlay_option(topology, key, value, source)
    if key in setting_fields():
        return validated(topology, {"settings": {**topology.settings.model_dump(),
                                                 key: yaml_value(value, source)}}, source)
    raise UserError(f"{source}: {key!r} is nothing an arm can change. Give {SPEC_HELP}.")


def arm_file(path: Path, command_line: Mapping[str, Any], source: str) -> Topology:
    """An arm's whole topology file, with the command line's settings over it."""
    try:
        return check_overlay_options(load_topology(path, dict(command_line), OVERLAY_NAMES,
                                                   ENGINE_NAMES), str(path))
    except UserError as error:
        raise UserError(f"{source}: {error}") from None


def yaml_value(value: str, source: str) -> Any:
    """A value of an arm's change, read as YAML (true, 1280, [100, 500])."""
    try:
        return load_yaml(value)
    except (yaml.YAMLError, RecursionError) as error:
        problem = ("nested too deeply" if isinstance(error, RecursionError)
                   else getattr(error, "problem", None) or "not valid YAML")
        raise UserError(f"{source}: the value {value!r} cannot be read ({problem}). Give a "
                        "number, a word, true/false, or a list such as [100, 500].") from None


def with_link(topology: Topology, key: str, value: str, source: str) -> Topology:
    """A link setting, its errors named by the arm's option (not sweep's --set)."""
    if not any(part.strip() for part in value.split(",")):
        raise UserError(f"{source}: no value for {key}. Give one, e.g. backbone.loss=1% or "
                        "site.rate=50mbit.")
    try:
        assignment = parse_assignment(f"{key}={value}")
        if len(assignment.values) != 1:
            raise UserError(f"an arm takes one value of {key}, not {len(assignment.values)}; "
                            f"'vnetbench sweep' measures a list (--set {key}={value})")
        return with_link_setting(topology, assignment, value)
    except UserError as error:
        said = str(error).removeprefix(f"--set {key}={value}: ").removeprefix("'--set ")
        raise UserError(f"{source}: {said}") from None


def with_overlay_option(topology: Topology, key: str, value: str, source: str) -> Topology:
    parts = key.split(".")
    if len(parts) != 3 or not all(parts):
        raise UserError(f"{source}: an overlay option is option.OVERLAY.KEY=VALUE, e.g. "
                        "option.wireguard.keepalive=25.")
    _, overlay, name = parts
    options = {**topology.overlay_options,
               overlay: {**topology.overlay_options.get(overlay, {}),
                         name: yaml_value(value, source)}}
    changed_topology = validated(topology, {"overlay_options": options}, source)
    try:
        overlay_for(changed_topology, overlay)  # its options are checked by its adapter
    except UserError as error:
        raise UserError(f"{source}: {error}") from None
    return changed_topology


def validated(topology: Topology, update: dict[str, Any], source: str) -> Topology:
    try:
        return Topology.model_validate({**topology.model_dump(), **update})
    except ValidationError as error:
        problem = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: "
                            f"{str(e['msg']).removeprefix('Value error, ')}"
                            for e in error.errors())
        raise UserError(f"{source}: {problem}.") from None


def round_order(text: str) -> Order:
    """--order's value, else one paragraph naming the choices."""
    for order in ORDERS:
        if text == order:
            return order
    raise UserError(f"--order {text!r}: the rounds' order is one of {', '.join(ORDERS)}. "
                    "Give --order random for a fair coin per round, or leave it out.")


def schedule(rounds: int, first: int = 1, order: Order = "alternate",
             seed: int = 0) -> list[tuple[int, str]]:
    """(round, arm) in running order from round `first` to `rounds`. Alternating: A B,
    B A, A B, ... (each arm first in half the rounds, so neither always runs on the
    machine the other has just warmed; rounds added to confirm a verdict go on
    alternating). Random: each round's order a fair coin drawn from (seed, round), so
    rounds added later are drawn as if planned."""
    def a_first(round_no: int) -> bool:
        if order == "random":
            return bool(np.random.default_rng([seed, round_no]).integers(2))
        return bool(round_no % 2)

    return [(r, arm) for r in range(first, rounds + 1)
            for arm in (ARMS if a_first(r) else ARMS[::-1])]


def make_arms(base: Topology, a: Sequence[str], b: Sequence[str] | None,
              command_line: Mapping[str, Any] | None = None) -> list[Arm]:
    """Arm A, and B (A itself when none is given: an A/A). `base` was read with the
    command line's settings (`command_line`); an arm's own file is read with them too."""
    return [Arm(label, tuple(spec), arm_topology(base, spec, f"--{label.lower()}",
                                                 command_line))
            for label, spec in zip(ARMS, (a, a if b is None else b), strict=True)]


def run_ab(scenario: Scenario, arms: list[Arm], session: AbSession, out_dir: Path,
           min_effect: float, judge_all: bool = False) -> Path:
    """Every round's bring-ups in schedule order into one directory, and while a judged
    metric is close to a verdict, more rounds up to the plan's last look; then the
    verdicts (verdicts.csv, run.json) and, for an A/A, the noise floor (noise.json)."""
    for arm in arms:
        scenario.check(arm.topology)
    adapters = {arm.label: require_overlays(arm.topology, [arm.topology.overlay])[
        arm.topology.overlay] for arm in arms}
    aa = arms[0].spec == arms[1].spec
    plan = session.plan()
    directory = new_directory(out_dir, f"{arms[0].topology.name}-{stamp()}-"
                                       f"{'aa' if aa else 'ab'}")
    record = new_record("ab", adapters.values(), scenario=scenario.name,
                        rounds=session.rounds, aa=aa, min_effect=min_effect,
                        judge_all=judge_all, confirm=plan.record() if plan else None,
                        order={"order": session.order, "seed": session.seed},
                        arms={arm.label: {"spec": list(arm.spec), "overlay":
                                          arm.topology.overlay} for arm in arms},
                        schedule=[])
    results = ResultSet(directory)
    by_label = {arm.label: arm for arm in arms}
    with recorded(directory, record):
        done, target = 0, session.rounds
        while target > done:
            for round_no, label in schedule(target, done + 1, session.order, session.seed):
                bring_up = len(record.schedule) + 1
                note(f"ab: bring-up {bring_up} of {2 * target}: round {round_no}, {label} "
                     f"({by_label[label].description})")
                run_bring_up(by_label[label], round_no, scenario, adapters[label], results,
                             directory, record)
            done, record.rounds = target, target
            target = next_target(load_results(directory), done, plan, min_effect, judge_all)
        frame = load_results(directory)
        table = verdict_table(frame, min_effect, judge_all, aa, plan)
        record.outside_load = outside_load_by_arm(frame)
        write_verdicts(directory, table, record, aa)
    return directory


def next_target(frame: pd.DataFrame, done: int, plan: SequentialPlan | None,
                min_effect: float, judge_all: bool) -> int:
    """The rounds to reach next: the plan's next look while a judged metric is close to
    a verdict, else `done` (the session ends)."""
    if plan is None or done >= plan.most:
        return done
    close = close_metrics(frame, min_effect, judge_all, plan)
    if not close:
        return done
    target = plan.next_look(done)
    note(f"ab: close to a verdict after {done} rounds: {', '.join(close)}; rounds "
         f"{done + 1} to {target} to confirm (at most {plan.most})")
    return target


def run_bring_up(arm: Arm, round_no: int, scenario: Scenario, overlay: Overlay,
                 results: ResultSet, directory: Path, record: RunRecord) -> None:
    started = datetime.now(UTC).isoformat(timespec="seconds")
    run_dir = run_scenarios(arm.topology, [scenario], directory / "runs", results=results,
                            overlay=overlay, variant=Variant(arm.label,
                                                             parameters={ROUND: round_no}))
    record.schedule.append({"round": round_no, "arm": arm.label, "run": run_dir.name,
                               "started": started,
                               "ended": datetime.now(UTC).isoformat(timespec="seconds")})
