"""The vNet adapter: maps the topology onto vNet's conductor, switches and agents.

Templates: templates/overlays/vnet/. Facts (programs, arguments, environment,
ports, log patterns, features): the profile, see profile.yml.
"""

from __future__ import annotations

import signal
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from python_on_whales import docker

from vnetbench import gate
from vnetbench.addressing import AddressPlan
from vnetbench.gate import prepare_gate
from vnetbench.measure.events import events_frame
from vnetbench.overlays.base import AgentLimits, Overlay, Reconfiguration
from vnetbench.overlays.vnet.artifacts import (
    VnetImages,
    feature_state,
    requested_images,
    resolve_images,
)
from vnetbench.overlays.vnet.files import (
    auth_text,
    machine_name,
    machines_config,
    node_key,
    topology_config,
    virtual_addresses,
)
from vnetbench.overlays.vnet.profile import VnetProfile, load_profile
from vnetbench.pki import make_pki
from vnetbench.topology import Topology

if TYPE_CHECKING:
    from vnetbench.stack import Stack

FILES_DIR = "vnet"  # under the run directory, mounted read-only at CONTAINER_FILES
CONTAINER_FILES = "/vnetbench-files"
RECONFIGURE_WAIT_SECONDS = 30.0


def options(topology: Topology | None) -> dict[str, Any]:
    return dict(topology.overlay_options.get("vnet", {})) if topology else {}


def profile_for(topology: Topology | None) -> VnetProfile:
    path = options(topology).get("profile")
    return load_profile(Path(path) if path else None)


def listening_check(port: int) -> list[str]:
    """A health check that reads /proc/net/tcp{,6} with bash builtins: no connection made."""
    script = (f'p=$(printf "%04X" {port}); for f in /proc/net/tcp /proc/net/tcp6; do '
              'while read -r _ a _ s _; do [[ $a == *:$p && $s == 0A ]] && exit 0; '
              'done < $f; done; exit 1')
    return ["CMD", "bash", "-c", script]


class Vnet(Overlay):
    name = "vnet"
    summary = "vNet: conductor, switches and agents; packets inside TCP (optionally TLS)"
    data_path = "agent → switch → switch → agent (TCP, optionally TLS, between each hop)"
    join_event = ("conductor", "agent_joined")
    agent_pools = True  # the seed ran all agents from one shell loop in one namespace

    # -- availability and features ------------------------------------------------
    def images(self, topology: Topology | None = None) -> VnetImages | None:
        return resolve_images(profile_for(topology), options(topology))[0]

    def unavailable_reason(self) -> str | None:
        images, reason = resolve_images(profile_for(None), {})
        return None if images else reason

    def version(self) -> str:
        images = self.images()
        return f"{profile_for(None).name}; {images.source}" if images else "not available"

    def feature_missing(self, feature: str, topology: Topology | None) -> str | None:
        images = self.images(topology)
        if images is None:
            return self.unavailable_reason()
        return feature_state(profile_for(topology), images, feature)

    def supports(self, scenario: str, topology: Topology | None = None) -> str | None:
        needed = {"config": ["reload"]}.get(scenario, [])
        if topology is not None:
            needed += ["tls"] if topology.settings.tls else []
            needed += ["limits"] if topology.settings.limits and scenario == "throughput" else []
        for feature in needed:
            reason = self.feature_missing(feature, topology)
            if reason:
                return reason
        return None

    def describe(self) -> list[tuple[str, bool, str]]:
        profile = profile_for(None)
        images, reason = resolve_images(profile, {})
        lines = [("vnet profile", True, profile.name), ("vnet images", images is not None,
                                                         images.source if images else reason)]
        if images:
            for feature in profile.features:
                missing = feature_state(profile, images, feature)
                lines.append((f"vnet feature: {feature}", missing is None,
                              missing or f"present ('{profile.feature(feature).detect}')"))
        return lines

    def matrix_variants(self, scenario: str) -> dict[str, dict[str, Any]]:
        if scenario == "throughput":  # the seed's three rows
            return {"tls": {"tls": True, "limits": False},
                    "plain": {"tls": False, "limits": False},
                    "tls-limits": {"tls": True, "limits": True}}
        # The seed's join and flood run over TLS; a build without it runs them plain,
        # so the matrix still measures them (the variant's name says so).
        plain = {} if self.feature_missing("tls", None) is None else {"tls": False}
        suffix = "-plain" if plain else ""
        if scenario == "join":
            return {f"n{n}{suffix}": {"machines": n, **plain} for n in (100, 200, 400, 800)}
        if scenario == "config":
            return {f"n{n}{suffix}": {"machines": n, **plain} for n in (300, 5000)}
        return {f"default{suffix}" if plain else "default": plain}

    # -- rendering --------------------------------------------------------------------
    def target_address(self, topology: Topology, plan: AddressPlan, agent: str) -> str:
        return str(virtual_addresses(topology, profile_for(topology))[agent])

    def event_patterns(self) -> dict[str, dict[str, str]]:
        return profile_for(None).events

    def limiter_event(self) -> tuple[str, str] | None:
        return ("switch", "limiter_drops")

    def agent_limits(self, topology: Topology) -> AgentLimits | None:
        if not topology.settings.limits or self.feature_missing("limits", topology):
            return None
        spec = profile_for(topology).feature("limits")
        pps = topology.settings.limit_pps or spec.get("default_packets_per_second")
        mbit = topology.settings.limit_mbit
        bits = mbit * 1e6 if mbit else spec.get("default_bits_per_second")
        return AgentLimits(float(pps), float(bits), float(spec.get("burst_seconds")))

    def template_context(self, topology: Topology, plan: AddressPlan) -> dict[str, Any]:
        profile = profile_for(topology)
        images = self.images(topology)
        return {"vnet": {
            "profile": profile,
            "images": images.images if images else requested_images(profile,
                                                                     options(topology))[0],
            "files": CONTAINER_FILES,
            **gate.template_context(),
            "listening": {role: listening_check(port) for role, port in profile.ports.items()},
            "environment": self.environment(topology, plan, profile),
            "arguments": self.arguments(topology, profile, plan),
            "tun_check": self.tun_checks(topology, profile),
        }}

    def environment(self, topology: Topology, plan: AddressPlan,
                    profile: VnetProfile) -> dict[str, dict[str, str]]:
        env = profile.environment
        common = {env.conductor_address: str(plan.conductor),
                  env.conductor_port: str(profile.ports["conductor"])}
        per_role: dict[str, dict[str, str]] = {"conductor": {}, "switch": dict(common),
                                               "agent": dict(common)}
        per_role[profile.config.holder][env.config_path] = profile.config.path
        if topology.settings.tls and not self.feature_missing("tls", topology):
            tls = profile.feature("tls")
            for role in per_role:
                per_role[role] |= {**dict(tls.get("environment")),
                                   str(tls.get("cert")): f"{CONTAINER_FILES}/pki/{role}.pem",
                                   str(tls.get("key")): f"{CONTAINER_FILES}/pki/{role}.key",
                                   str(tls.get("ca")): f"{CONTAINER_FILES}/pki/ca.pem"}
        if not self.feature_missing("auth_file", topology):
            auth = profile.feature("auth_file")
            per_role["conductor"][str(auth.get("variable"))] = str(auth.get("path"))
        limits = self.agent_limits(topology)
        if limits:
            spec = profile.feature("limits")
            role = str(spec.get("role"))
            per_role[role] |= {
                str(spec.get("packets_variable")): f"{limits.packets_per_second:.0f}",
                str(spec.get("bits_variable")): f"{limits.bits_per_second:.0f}"}
        return per_role

    def arguments(self, topology: Topology, profile: VnetProfile,
                  plan: AddressPlan) -> dict[str, list[str]]:
        """Program and arguments per node; pooled agents get @NAME@/@KEY@ placeholders."""
        tag = plan.tag  # stable per run; keys derive from it
        argv: dict[str, list[str]] = {"conductor": [profile.programs["conductor"],
                                                    *profile.arguments["conductor"]]}
        for switch in topology.switches:
            argv[switch] = [profile.programs["switch"], *(
                a.format(name=switch, key=node_key(tag, switch), port=profile.ports["switch"])
                for a in profile.arguments["switch"])]
        for container in topology.agent_containers():
            pooled = len(container.agents) > 1
            name = "@NAME@" if pooled else container.agents[0]
            key = "@KEY@" if pooled else node_key(tag, name)
            argv[container.name] = [profile.programs["agent"], *(
                a.format(name=name, key=key) for a in profile.arguments["agent"])]
        return argv

    def pool_members(self, topology: Topology, plan: AddressPlan, container: str) -> str:
        """VNETBENCH_POOL for a pool container: 'name:key ...' ('' for a single agent)."""
        for group in topology.agent_containers():
            if group.name == container and len(group.agents) > 1:
                return " ".join(f"{a}:{node_key(plan.tag, a)}" for a in group.agents)
        return ""

    def tun_checks(self, topology: Topology, profile: VnetProfile) -> dict[str, list[str]]:
        checks = {}
        for container in topology.agent_containers():
            names = " ".join(profile.tun_interface.format(name=a) for a in container.agents)
            checks[container.name] = ["CMD", "bash", "-c",
                                      f"for i in {names}; do [[ -e /sys/class/net/$i ]] "
                                      "|| exit 1; done"]
        return checks

    def write_files(self, topology: Topology, plan: AddressPlan, run_dir: Path) -> list[Path]:
        profile = profile_for(topology)
        directory = run_dir / FILES_DIR
        directory.mkdir(parents=True, exist_ok=True)
        config = directory / Path(profile.config.path).name
        config.write_text(topology_config(topology, profile, plan.tag))
        written = [config, prepare_gate(run_dir)]
        auth = directory / Path(str(profile.feature("auth_file").get("path"))).name
        auth.write_text(auth_text(profile, topology, plan.tag))
        auth.chmod(0o600)
        written.append(auth)
        if topology.settings.tls:
            written.append(make_pki(directory / "pki", plan.tag,
                                    ["conductor", "switch", "agent"]).ca)
        return written

    # -- the config scenario ------------------------------------------------------------
    def reconfigure(self, stack: Stack, topology: Topology, machines: int) -> Reconfiguration:
        profile = profile_for(topology)
        reload = profile.feature("reload")
        holder = stack.container(str(reload.get("role")))
        config = stack.rendered.directory / FILES_DIR / Path(profile.config.path).name
        text = machines_config(profile, machines)
        rewrite_in_place(config, text)  # the bind mount follows the inode
        self.signal_and_wait(stack, holder, str(reload.get("signal")), topology)  # load it
        extra = profile.config.rule_line.format(source=machine_name(0),
                                                destination=machine_name(machines // 2))
        with config.open("a") as handle:
            handle.write(extra + "\n")
        seconds, confirmed = self.signal_and_wait(stack, holder, str(reload.get("signal")),
                                                  topology)
        final = config.read_text()
        status = "ok" if confirmed == len(topology.switches) else (
            f"only {confirmed} of {len(topology.switches)} switches confirmed the new "
            f"config within {RECONFIGURE_WAIT_SECONDS:.0f} s")
        return Reconfiguration(lines=len(final.splitlines()), bytes=len(final.encode()),
                               seconds=seconds if status == "ok" else None,
                               confirmed=confirmed, expected=len(topology.switches),
                               status=status)

    def signal_and_wait(self, stack: Stack, holder: str, signal_name: str,
                        topology: Topology) -> tuple[float | None, int]:
        """Send the reload signal; seconds until every switch logged a confirmation."""
        since = time.time()
        docker.kill(holder, signal=signal.Signals[signal_name].name)
        deadline = since + RECONFIGURE_WAIT_SECONDS
        patterns = {"switch": {"config_confirmed": self.event_patterns()["switch"]
                               ["config_confirmed"]}}
        confirmed_count = 0
        while time.time() < deadline:
            events = events_frame(stack.logs("switch", since=_utc(since)), patterns)
            confirmed = events.drop_duplicates("container")
            confirmed_count = len(confirmed)
            if confirmed_count == len(topology.switches):
                return confirmed["time"].max().timestamp() - since, confirmed_count
            time.sleep(0.05)
        return None, confirmed_count


def rewrite_in_place(path: Path, text: str) -> None:
    with path.open("r+") as handle:
        handle.seek(0)
        handle.write(text)
        handle.truncate()


def _utc(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)
