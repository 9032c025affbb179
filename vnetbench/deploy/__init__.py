"""A topology brought up and taken down: rendered into a run directory, started (shaped)
and stopped by one lifecycle, this machine's readiness (`vnetbench doctor`), and the
running topologies the pytest plugin hands out."""
