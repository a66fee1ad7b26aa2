"""Evaluation: bench, gold metrics, ablations, traces, RAGScope audits, relevance aggregation, synthetic dumps, plots."""
