"""Pairwise signals over packed candidates: similarity, contradictions (the one definition), freshness, query terms."""
