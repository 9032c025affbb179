"""The tools image, started through testcontainers: the tools every
measurement relies on are there, at the versions the results record."""

import pytest
from testcontainers.core.container import DockerContainer

from vnetbench.runtime.images import TOOLS_IMAGE

pytestmark = pytest.mark.integration


def test_tools_image_has_measurement_tools() -> None:
    with DockerContainer(TOOLS_IMAGE).with_command("sleep infinity") as container:
        code, output = container.exec("iperf3 --version")
        assert code == 0
        assert output.decode().startswith("iperf 3.18")
        # vnetbench's own helpers too: a usage error (exit 2) proves each is installed
        # and runs under the image's interpreter or shell
        for tool in ("vnetbench-fault", "vnetbench-at"):
            code, output = container.exec(tool)
            assert code == 2, f"{tool}: {code} {output!r}"
        for tool in ("ping -V", "tc -V", "iptables-nft -V", "nft -v", "ethtool --version"):
            code, output = container.exec(tool)
            assert code == 0, f"{tool}: {output!r}"
