"""Runs: one topology's scenarios (session), several overlays (comparison), one
link parameter over values (sweep), everything available (matrix)."""
