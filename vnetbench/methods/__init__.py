"""The reference methods: name -> preset."""

from vnetbench.errors import UserError
from vnetbench.methods.base import Method, Step
from vnetbench.methods.presets import METHODS


def get_method(name: str) -> Method:
    try:
        return METHODS[name]
    except KeyError:
        raise UserError(f"There is no method called '{name}'. Available: "
                        f"{', '.join(METHODS)} (vnetbench methods lists them).") from None


__all__ = ["METHODS", "Method", "Step", "get_method"]
