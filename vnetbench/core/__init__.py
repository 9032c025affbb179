"""The vocabulary every layer speaks: the strict base model and the names of things,
quantities, a user's YAML, what a metric is, the results' columns and what became of
a measurement. It imports nothing of vnetbench but errors.py."""
