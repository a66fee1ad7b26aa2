"""Selectors: the greedy family and CP-SAT, in a registry keyed by the Method enum."""
