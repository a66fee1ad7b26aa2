"""Selectors: greedy baselines and the OR-Tools optimizer, behind one registry."""
