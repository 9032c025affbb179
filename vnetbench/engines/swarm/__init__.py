"""The swarm engine: a run spread over a Docker Swarm's nodes (engine.py says how)."""
