"""A fabric helper's leftover DOCKER-USER rule is deleted by an argument list parsed
from what iptables printed: its text never passes through a shell."""

from __future__ import annotations

from typing import Any

import pytest

from vnetbench.engines.fabric import deletion_argv, remove_fabric_rules
from vnetbench.runtime import labels

# A run id is the user's text: one that would run a command if a shell read the rule.
HOSTILE_RUN = 'x"; touch /tmp/owned; echo "'
RULE = ('-A DOCKER-USER -i vb1a2b3c-+ -o vb1a2b3c-+ -s 10.160.0.0/16 -d 10.160.0.0/16 '
        '-m comment --comment "vnetbench:x\\"; touch /tmp/owned; echo \\"" -j ACCEPT')


def test_the_rule_s_words_become_arguments_as_iptables_quoted_them() -> None:
    argv = deletion_argv("iptables-nft", RULE)
    assert argv[:3] == ["iptables-nft", "-D", "DOCKER-USER"]
    assert argv[argv.index("--comment") + 1] == f"vnetbench:{HOSTILE_RUN}"
    assert argv[-2:] == ["-j", "ACCEPT"]


def test_only_a_docker_user_rule_of_a_known_flavour_is_deleted() -> None:
    with pytest.raises(ValueError, match="flavour"):
        deletion_argv("sh", RULE)
    with pytest.raises(ValueError, match="DOCKER-USER"):
        deletion_argv("iptables-nft", "-A INPUT -j ACCEPT")


class Host:
    """A host whose DOCKER-USER chain holds one leftover rule; every helper recorded."""

    def __init__(self) -> None:
        self.helpers: list[tuple[list[str], dict[str, Any]]] = []
        self.image = self

    def exists(self, image: str) -> bool:
        return True

    def run(self, image: str, argv: list[str], **options: Any) -> str:
        self.helpers.append((argv, options))
        return f"iptables-nft {RULE}\n" if argv[:2] == ["sh", "-c"] else ""


def test_removal_runs_iptables_itself_with_the_rule_as_arguments() -> None:
    host = Host()
    assert remove_fabric_rules([("", host)]) == 1  # type: ignore[list-item]
    listing, deletion = host.helpers
    assert "vnetbench" not in listing[0][2]  # the listing script holds no rule or run id
    assert deletion[0] == deletion_argv("iptables-nft", RULE)
    assert "sh" not in deletion[0] and "-c" not in deletion[0]
    assert all(labels.owned(options["labels"]) for _, options in host.helpers)
