"""The vNet adapter: maps the topology onto vNet's conductor, switches and agents.

Templates: templates/overlays/vnet/. Facts (programs, arguments, environment,
ports, log patterns, features): the profile, see profile.yml.
"""

from __future__ import annotations

import secrets
import shutil
import signal
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from ipaddress import IPv4Address
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from vnetbench.measure.events import lookup_events
from vnetbench.model.addressing import AddressPlan
from vnetbench.model.capabilities import Capability
from vnetbench.model.topology import Topology
from vnetbench.overlays.base import (
    Adjusted,
    AgentLimits,
    Overlay,
    OverlayOptions,
    Reconfiguration,
)
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
    topology_config,
    virtual_addresses,
)
from vnetbench.overlays.vnet.profile import ImageName, VnetProfile, load_profile
from vnetbench.runtime import gate
from vnetbench.runtime.gate import prepare_gate
from vnetbench.runtime.pki import make_pki, write_private

if TYPE_CHECKING:
    from vnetbench.engines.stack import Stack
    from vnetbench.overlays.base import EventLookup

FILES_DIR = "vnet"  # under the run directory: vnet/<role>/ is mounted at CONTAINER_FILES
CONTAINER_FILES = "/vnetbench-files"
KEYS_DIR = "keys"  # vnet/keys/<container>: "name key" lines of that container's nodes
CONTAINER_KEYS = "/vnetbench-keys"
ROLES = ("conductor", "switch", "agent")
RECONFIGURE_WAIT_SECONDS = 30.0
PLAIN_REMARK = "TLS not in this build: measured plain"
# The capabilities a build may lack, by the profile's feature that provides each.
FEATURES = {Capability.RELOAD: "reload", Capability.TLS: "tls", Capability.LIMITS: "limits"}


class VnetOptions(OverlayOptions):
    """overlay_options.vnet: images per role (or --vnet-image), a profile over the shipped one."""

    images: dict[Literal["conductor", "switch", "agent"], ImageName] = Field(
        default_factory=dict)
    profile: Path | None = None


@dataclass(frozen=True)
class VnetFacts:
    """What the engine says about the vNet build in use, learned once before rendering."""

    images: VnetImages | None
    unavailable: str | None = None  # why there are no images
    absent: dict[str, str | None] = field(default_factory=dict)  # feature -> why absent


def listening_check(port: int) -> list[str]:
    """A health check that reads /proc/net/tcp{,6} with bash builtins: no connection made."""
    script = (f'p=$(printf "%04X" {port}); for f in /proc/net/tcp /proc/net/tcp6; do '
              'while read -r _ a _ s _; do [[ $a == *:$p && $s == 0A ]] && exit 0; '
              'done < $f; done; exit 1')
    return ["CMD", "bash", "-c", script]


class Vnet(Overlay):
    name = "vnet"
    secret_dirs = (FILES_DIR,)
    summary = "vNet: conductor, switches and agents; packets inside TCP (optionally TLS)"
    data_path = "agent → switch → switch → agent (TCP, optionally TLS, between each hop)"
    join_event = ("conductor", "agent_joined")
    control_plane = "conductor"  # registers agents; the switches carry the packets
    # Pools: the seed ran all agents from one shell loop in one namespace.
    capabilities = frozenset(Capability)
    services = ("conductor", "{switch}")
    options_model = VnetOptions
    options: VnetOptions

    def __init__(self, options: Mapping[str, Any] | None = None,
                 facts: VnetFacts | None = None) -> None:
        super().__init__(options)
        self.profile = load_profile(self.options.profile)
        self._facts = facts

    def chosen_images(self) -> dict[str, str]:
        return {str(role): image for role, image in self.options.images.items()}

    # -- availability and features (the engine is asked once, in detect) ------------
    def detect(self) -> None:
        if self._facts is not None:
            return
        from vnetbench.engines import local  # vNet's images are checked on this machine

        runtime = local()
        images, reason = resolve_images(runtime, self.profile, self.chosen_images())
        absent = ({feature: feature_state(runtime, self.profile, images, feature)
                   for feature in self.profile.features} if images else {})
        self._facts = VnetFacts(images, reason or None, absent)

    @property
    def facts(self) -> VnetFacts:
        if self._facts is None:
            raise RuntimeError("Vnet.detect() must run before rendering or measuring")
        return self._facts

    def unavailable_reason(self) -> str | None:
        self.detect()
        return self.facts.unavailable

    def version(self) -> str:
        self.detect()
        images = self.facts.images
        return f"{self.profile.name}; {images.source}" if images else "not available"

    def feature_missing(self, feature: str) -> str | None:
        """None when the build in use has the feature, else why not."""
        if self.facts.images is None:
            return self.facts.unavailable
        return self.facts.absent.get(feature)

    fixed_tunnel_mtu = ("vNet's interface (../shared/vnet/INTERFACE.md) documents no MTU "
                        "setting; its agents configure their TUN device themselves")

    def adjust_settings(self, topology: Topology) -> Adjusted:
        """TLS unset: TLS where the build has it, else plain, and the results say so;
        encryption: false is TLS off."""
        if topology.settings.encryption is False and topology.settings.tls is None:
            settings = topology.settings.model_copy(update={"tls": False})
            return Adjusted(topology.model_copy(update={"settings": settings}))
        if topology.settings.tls is not None:
            return Adjusted(topology)
        has_tls = self.feature_missing("tls") is None
        settings = topology.settings.model_copy(update={"tls": has_tls})
        return Adjusted(topology.model_copy(update={"settings": settings}),
                        "" if has_tls else PLAIN_REMARK)

    def missing(self, capability: Capability) -> str | None:
        feature = FEATURES.get(capability)
        return self.feature_missing(feature) if feature else None

    def describe(self) -> list[tuple[str, bool, str]]:
        self.detect()
        images = self.facts.images
        lines = [("vnet profile", True, self.profile.name),
                 ("vnet images", images is not None,
                  images.source if images else str(self.facts.unavailable))]
        for feature in self.profile.features if images else ():
            missing = self.feature_missing(feature)
            lines.append((f"vnet feature: {feature}", missing is None,
                          missing or f"present ('{self.profile.feature(feature).detect}')"))
        return lines

    # -- rendering --------------------------------------------------------------------
    def target_address(self, topology: Topology, plan: AddressPlan, agent: str) -> str:
        return str(virtual_addresses(topology, self.profile)[agent])

    def overlay_addresses(self, topology: Topology) -> dict[str, IPv4Address]:
        return virtual_addresses(topology, self.profile)

    def event_patterns(self) -> dict[str, dict[str, str]]:
        return self.profile.events

    def limiter_event(self) -> tuple[str, str] | None:
        return ("switch", "limiter_drops")

    def why_not_joined(self, events: EventLookup, missing: set[str]) -> dict[str, str]:
        """An agent a switch refused: the conductor gives the agent a token and tells the
        switch; a switch that has not yet stored the token when the agent presents it
        closes the connection ("Rejected agent: invalid token T"). When the switch then
        logs "Expecting agent" with that token, the token came after the agent (the race
        of src/switch/setup.cpp); the snapshot's agent does not try again."""
        assigned = {str(f["token"]): (str(f["agent"]), str(f["switch"]))
                    for f in events("conductor", "agent_assigned")["fields"]
                    if f.get("token") and f.get("agent") in missing}
        expected = {str(f["token"]) for f in events("switch", "agent_expected")["fields"]
                    if f.get("token")}
        reasons = {}
        for fields in events("switch", "agent_rejected")["fields"]:
            token = str(fields.get("token") or "")
            if token not in assigned:
                continue
            agent, switch = assigned[token]
            reasons[agent] = (f"refused by {switch} ({fields.get('reason') or 'rejected'})"
                              + (": its token from the conductor reached the switch after "
                                 "the agent, which did not try again" if token in expected
                                 else ""))
        return reasons

    def agent_limits(self, topology: Topology) -> AgentLimits | None:
        if not topology.settings.limits or self.feature_missing("limits"):
            return None
        spec = self.profile.feature("limits")
        pps = topology.settings.limit_pps or spec.get("default_packets_per_second")
        mbit = topology.settings.limit_mbit
        bits = mbit * 1e6 if mbit else spec.get("default_bits_per_second")
        return AgentLimits(float(pps), float(bits), float(spec.get("burst_seconds")))

    def template_context(self, topology: Topology, plan: AddressPlan) -> dict[str, Any]:
        profile = self.profile
        images = self.facts.images
        return {"vnet": {
            "profile": profile,
            "images": images.images if images else requested_images(
                profile, self.chosen_images())[0],
            "files": CONTAINER_FILES,
            "key_file": CONTAINER_KEYS,
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
        if topology.settings.tls and not self.feature_missing("tls"):
            tls = profile.feature("tls")
            for role in per_role:
                per_role[role] |= {**dict(tls.get("environment")),
                                   str(tls.get("cert")): f"{CONTAINER_FILES}/cert.pem",
                                   str(tls.get("key")): f"{CONTAINER_FILES}/key.pem",
                                   str(tls.get("ca")): f"{CONTAINER_FILES}/ca.pem"}
        if not self.feature_missing("auth_file"):
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
        """Program and arguments per node. Keys are never in the compose file: the entry
        wrapper fills @KEY@ from the container's own key file (and @NAME@ in pools).
        The program's own command line does hold its key (visible in `ps`): vNet's
        switch and agent accept their auth key only as an argument (INTERFACE.md)."""
        argv: dict[str, list[str]] = {"conductor": [profile.programs["conductor"],
                                                    *profile.arguments["conductor"]]}
        for switch in topology.switches:
            argv[switch] = [profile.programs["switch"], *(
                a.format(name=switch, key="@KEY@", port=profile.ports["switch"])
                for a in profile.arguments["switch"])]
        for container in topology.agent_containers():
            name = "@NAME@" if len(container.agents) > 1 else container.agents[0]
            argv[container.name] = [profile.programs["agent"], *(
                a.format(name=name, key="@KEY@") for a in profile.arguments["agent"])]
        return argv

    def pool_members(self, topology: Topology, plan: AddressPlan, container: str) -> str:
        """VNETBENCH_POOL for a pool container: 'name name ...' ('' for a single agent)."""
        for group in topology.agent_containers():
            if group.name == container and len(group.agents) > 1:
                return " ".join(group.agents)
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
        """The config; per role a directory (its certificate and key with TLS, the
        conductor's credentials file); per container a key file of its own nodes.
        Keys are random for every stack."""
        profile = self.profile
        directory = run_dir / FILES_DIR
        for role in ROLES:
            (directory / role).mkdir(parents=True, exist_ok=True)
        config = directory / Path(profile.config.path).name
        config.write_text(topology_config(topology, profile, plan.tag))
        keys = new_keys(topology)
        written = [config, prepare_gate(run_dir),
                   write_private(directory / "conductor" / self.auth_file_name(),
                                auth_text(profile, topology, keys))]
        for node, names in key_holders(topology).items():
            written.append(write_private(directory / KEYS_DIR / node,
                                        "".join(f"{n} {keys[n]}\n" for n in names)))
        if topology.settings.tls:
            written += issue_role_certificates(directory, plan.tag)
        return written

    def auth_file_name(self) -> str:
        return Path(str(self.profile.feature("auth_file").get("path"))).name

    def private_files(self, run_dir: Path) -> list[Path]:
        """Node keys, the conductor's credentials file and the roles' TLS keys."""
        directory = run_dir / FILES_DIR
        found = [*(directory / KEYS_DIR).glob("*"), *directory.glob("*/key.pem"),
                 directory / "conductor" / self.auth_file_name()]
        return [path for path in found if path.is_file()]

    # -- the config scenario ------------------------------------------------------------
    def reconfigure(self, stack: Stack, topology: Topology, machines: int) -> Reconfiguration:
        profile = self.profile
        reload = profile.feature("reload")
        holder = stack.container(str(reload.get("role")))
        config = stack.rendered.directory / FILES_DIR / Path(profile.config.path).name
        text = machines_config(profile, machines)
        rewrite_in_place(config, text)  # the bind mount follows the inode
        stack.file_changed(config)  # a swarm: each node's copy too
        self.signal_and_wait(stack, holder, str(reload.get("signal")), topology)  # load it
        extra = profile.config.rule_line.format(source=machine_name(0),
                                                destination=machine_name(machines // 2))
        with config.open("a") as handle:
            handle.write(extra + "\n")
        stack.file_changed(config)
        seconds, confirmed = self.signal_and_wait(stack, holder, str(reload.get("signal")),
                                                  topology)
        final = config.read_text()
        everyone = confirmed == len(topology.switches)
        unconfirmed = "" if everyone else (
            f"only {confirmed} of {len(topology.switches)} switches confirmed the new "
            f"config within {RECONFIGURE_WAIT_SECONDS:.0f} s")
        return Reconfiguration(lines=len(final.splitlines()), bytes=len(final.encode()),
                               seconds=seconds if everyone else None,
                               confirmed=confirmed, expected=len(topology.switches),
                               unconfirmed=unconfirmed)

    def signal_and_wait(self, stack: Stack, holder: str, signal_name: str,
                        topology: Topology) -> tuple[float | None, int]:
        """Send the reload signal; seconds until every switch logged a confirmation."""
        since = time.time()
        stack.engine.signal([holder], signal.Signals[signal_name].name)
        deadline = since + RECONFIGURE_WAIT_SECONDS
        confirmed_count = 0
        while time.time() < deadline:
            events = lookup_events(stack.logs("switch", since=_utc(since)),
                                   self.event_patterns(), "switch", "config_confirmed")
            confirmed = events.drop_duplicates("container")
            confirmed_count = len(confirmed)
            if confirmed_count == len(topology.switches):
                return confirmed["time"].max().timestamp() - since, confirmed_count
            time.sleep(0.05)
        return None, confirmed_count


def new_keys(topology: Topology) -> dict[str, str]:
    """A random auth key per switch and agent, for one stack."""
    return {name: secrets.token_hex(8)
            for name in [*topology.switches, *(a.name for a in topology.agents)]}


def key_holders(topology: Topology) -> dict[str, list[str]]:
    """Container -> the nodes whose keys it holds: a switch its own, an agent
    container its agents'."""
    holders = {switch: [switch] for switch in topology.switches}
    holders |= {c.name: list(c.agents) for c in topology.agent_containers()}
    return holders


def issue_role_certificates(directory: Path, tag: str) -> list[Path]:
    """A throwaway CA and one certificate per role; each role's directory gets the CA
    certificate and its own certificate and key (cert.pem, key.pem) and nothing else."""
    with tempfile.TemporaryDirectory(dir=directory) as staging:
        pki = make_pki(Path(staging), tag, list(ROLES))
        for role, issued in pki.roles.items():
            shutil.copyfile(pki.ca, directory / role / "ca.pem")
            shutil.copyfile(issued.cert, directory / role / "cert.pem")
            write_private(directory / role / "key.pem", issued.key.read_text())
    return [directory / role / "cert.pem" for role in ROLES]


def rewrite_in_place(path: Path, text: str) -> None:
    with path.open("r+") as handle:
        handle.seek(0)
        handle.write(text)
        handle.truncate()


def _utc(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)
