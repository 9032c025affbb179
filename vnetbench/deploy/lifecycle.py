"""One bring-up for every entry point: a topology becomes a running, shaped stack
and goes again.

`vnetbench run` and `up`, the pytest plugin and `calibrate` all come through
here, so each gets the same engine (a swarm when the topology names one), the
same checks before anything starts (the overlay's settings, the kernel's
shaping), another address block when the engine refuses one, the shaping read
back, and, however it ends, the logs kept, everything of the stack removed and
its private keys gone: they are made in a scratch directory outside the results
(scratch.py), which teardown wipes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

from vnetbench.deploy.render import render_run
from vnetbench.engines import EngineError, engine_facts, engine_for
from vnetbench.engines.allocation import BlockClaim
from vnetbench.engines.base import Engine
from vnetbench.engines.stack import Refused, Stack
from vnetbench.errors import BlockTaken, UserError
from vnetbench.model.topology import Topology
from vnetbench.overlays import Overlay
from vnetbench.overlays.base import remove_private_files
from vnetbench.runtime.images import ImageSet
from vnetbench.runtime.interrupts import shielded, teardown_guard
from vnetbench.runtime.scratch import release_stack_scratch, stack_scratch
from vnetbench.shaping.apply import check_shaping, shape_run
from vnetbench.terminal.ui import note, waiting

BLOCK_ATTEMPTS = 4  # blocks tried per stack when the engine refuses one


@dataclass(frozen=True)
class Prepared:
    """A topology as its engine and overlay run it, checked, with the images."""

    topology: Topology
    overlay: Overlay
    engine: Engine
    images: ImageSet
    remark: str = ""  # how the overlay adjusted the settings


def prepare(topology: Topology, overlay: Overlay, engine: Engine | None = None, *,
            images: ImageSet, refuse_unsupported: bool = True) -> Prepared:
    """Everything checked before a stack starts: the engine (a swarm: found now), the
    shared host limits its daemons need, the settings this overlay runs
    (`refuse_unsupported`: encryption: false refused where it cannot; a run records
    such a pass as not run instead), the kernel's shaping;
    `images`, the project's images, as this machine's runtime made them (its caller
    has it: HostRuntime.project_images)."""
    engine = engine or engine_for(topology)
    if refuse_unsupported:
        overlay.require_supported_settings(topology)
    adjusted = overlay.adjust(engine.adjust(topology))
    check_shaping(adjusted.topology)
    overlay.require_host_limits(adjusted.topology)  # a scenario's own stack: Scenario.check
    return Prepared(adjusted.topology, overlay, engine, images, adjusted.remark)


@dataclass
class StackSpec:
    """One stack to bring up: what it runs, where its files go, who owns it."""

    prepared: Prepared
    run_id: str
    directory: Path  # the stack's directory: compose file, the overlay's files, raw
    owner: str
    logs_dir: Path | None = None  # default: directory/logs
    # another block was claimed after the engine refused one: (refused, claimed)
    block_moved: Callable[[IPv4Network, IPv4Network], None] = lambda refused, claimed: None
    applied: dict[str, Any] = field(default_factory=dict)  # the shaping, as read back
    # vnetbench's own steps, in order: (step, began, ended), epoch seconds (calibrate's
    # breakdown of bring-up and teardown)
    steps: list[tuple[str, float, float]] = field(default_factory=list)

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        began = time.time()
        try:
            yield
        finally:
            self.steps.append((name, began, time.time()))

    @property
    def topology(self) -> Topology:
        return self.prepared.topology


def start(spec: StackSpec, claim: BlockClaim) -> Stack:
    """Render, bring up and shape the stack (another block when the engine refuses
    one); on any failure everything of it is removed before the error goes on."""
    with teardown_guard():
        for attempt in range(1, BLOCK_ATTEMPTS + 1):
            with spec.step("render"):
                stack = made_stack(spec, claim.block)
            try:
                with spec.step("up"):
                    stack.unready = stack.up(refused=refusals_of(stack, spec.prepared.overlay))
                with spec.step("shape"):
                    spec.applied = shape_run(stack, spec.topology)
                return stack
            except BlockTaken as refused:
                if attempt == BLOCK_ATTEMPTS:  # given up: its keys leave with it too
                    with shielded():
                        stop(stack, spec)
                    raise
                with shielded():
                    stack.down()
                move_block(claim, refused, spec)
            except BaseException:
                with shielded():
                    stop(stack, spec)
                raise
    raise AssertionError("unreachable")


def refusals_of(stack: Stack, overlay: Overlay) -> Refused | None:
    """Which starting agents the overlay's servers refused, read from their logs since
    the bring-up began: for an overlay whose servers place agents (a join event);
    None for the others (nothing to read, no log read)."""
    if overlay.join_event is None:
        return None
    since = datetime.now(UTC)

    def refused(starting: set[str]) -> dict[str, str]:
        return overlay.why_not_joined(
            lambda role, event: overlay.events(stack, role, event, since), starting)
    return refused


def made_stack(spec: StackSpec, block: IPv4Network) -> Stack:
    """The stack rendered, its keys made in its scratch directory (scratch.py): one
    interrupted while they are made leaves none in the run directory, and its scratch
    goes at once."""
    prepared = spec.prepared
    # an overlay without keys (the baseline) gets none: nothing would ever wipe it
    scratch = (stack_scratch(spec.run_id, spec.directory, spec.owner)
               if prepared.overlay.secret_dirs else None)
    try:
        rendered = render_run(spec.topology, prepared.overlay, spec.run_id, block,
                              spec.directory, prepared.images, spec.owner, engine_facts(),
                              scratch)
    except BaseException:
        with shielded():
            release_stack_scratch(spec.directory, keep_public=False)
        raise
    return Stack(rendered, prepared.engine, spec.topology)


def move_block(claim: BlockClaim, refused: BlockTaken, spec: StackSpec) -> None:
    before = claim.block
    after = claim.replace()
    note(f"The engine refused the address block {refused.block} (another network "
         f"overlaps it); the run moves to {after}", style="yellow")
    spec.block_moved(before, after)


def stop(stack: Stack, spec: StackSpec) -> None:
    """Keep the stack's logs (a failure to is said), remove everything of it, then its
    private keys from the run directory."""
    project = stack.rendered.project
    with shielded(), waiting(f"tearing down {project}"):
        try:
            with spec.step("save logs"):
                stack.save_logs(spec.logs_dir or stack.rendered.directory / "logs")
        except (OSError, EngineError) as error:  # full disk, engine gone...
            note(f"the logs of {project} could not be saved ({error}); tearing "
                 "down anyway", style="yellow")
        finally:
            try:
                with spec.step("remove"):
                    stack.down()
            finally:
                forget_private_keys(spec.prepared.overlay, stack.rendered.directory)


@contextmanager
def running(spec: StackSpec, claim: BlockClaim) -> Iterator[Stack]:
    """The stack up and shaped for the `with` block; whatever happens, torn down."""
    stack = start(spec, claim)
    with teardown_guard():
        try:
            yield stack
        finally:
            stop(stack, spec)


def forget_private_keys(overlay: Overlay, stack_dir: Path) -> None:
    """Once the stack is gone, its private keys go: removed (or redacted) where they
    are, the public files copied from the scratch directory into the run directory,
    the scratch directory wiped; a failure is said, not raised over the run's own
    error."""
    try:
        remove_private_files(overlay, stack_dir)
    except UserError as error:
        note(f"{error}", style="yellow")
    try:
        release_stack_scratch(stack_dir)
    except OSError as error:
        note(f"The public files of {stack_dir} could not all be copied out of its "
             f"scratch directory ({error}); its scratch directory is wiped anyway.",
             style="yellow")
