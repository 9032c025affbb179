"""vnetbench: a containerised benchmark testbed for overlay networks."""

__version__ = "0.1.0"
