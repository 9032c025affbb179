"""A run's results and how they are judged: the results frame (results.py), run.json and
the machine facts it keeps, the statistics, change points and the group-sequential
plan, targets on metrics (SLOs) and the figures the testbed cannot produce."""
