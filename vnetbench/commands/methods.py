"""`vnetbench methods`: list the reference methods `run --method` reproduces."""

from __future__ import annotations

from rich.text import Text

from vnetbench.terminal.ui import out_console


def methods() -> None:
    """List the reference methods `run --method` reproduces."""
    from vnetbench.methods import METHODS

    for method in METHODS.values():
        steps = "; ".join(s.label for s in method.steps)
        out_console.print(Text.assemble((method.name, "bold"), f" ({method.reference}): "
                                        f"{method.summary}. Steps: {steps}."), soft_wrap=True)
