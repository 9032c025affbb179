"""The scenario registry: name -> scenario."""

from vnetbench.errors import UserError
from vnetbench.scenarios.base import PassResult, Scenario, ScenarioContext
from vnetbench.scenarios.config import ConfigChange
from vnetbench.scenarios.failover import Failover
from vnetbench.scenarios.flood import Flood
from vnetbench.scenarios.join import Join
from vnetbench.scenarios.loaded_latency import LoadedLatency
from vnetbench.scenarios.room import Room
from vnetbench.scenarios.throughput import Throughput
from vnetbench.scenarios.transactions import Transactions
from vnetbench.scenarios.transfer import TransferScenario

SCENARIOS: dict[str, Scenario] = {
    s.name: s for s in (Throughput(), Join(), ConfigChange(), Flood(), TransferScenario(),
                        Failover(), Room(), Transactions(), LoadedLatency())
}


def get_scenario(name: str) -> Scenario:
    try:
        return SCENARIOS[name]
    except KeyError:
        raise UserError(
            f"There is no scenario called '{name}'. Available: {', '.join(sorted(SCENARIOS))}."
        ) from None


__all__ = ["SCENARIOS", "PassResult", "Scenario", "ScenarioContext", "get_scenario"]
