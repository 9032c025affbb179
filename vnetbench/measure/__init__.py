"""Measurement: running tools inside agents' namespaces and parsing their output."""
