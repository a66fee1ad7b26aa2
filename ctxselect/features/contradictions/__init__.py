"""Contradictions, the one room for them: detection for a call (:mod:`.detect`), counting and
listing in a given context (:mod:`.context`), and the reasons as messages may show them
(:mod:`.reasons`, under the no-echo rule)."""

from ctxselect.features.contradictions.context import (
    BLOCK_ROWS,
    MAX_LISTED_PAIRS,
    PATTERN_LIMIT,
    ConflictPair,
    ConflictSummary,
    conflict_pairs,
    conflict_summary,
)
from ctxselect.features.contradictions.detect import (
    CLAIM_ALL_TEXTS_LIMIT,
    claim_pairs,
    drift_pairs,
    merge_contradictions,
    version_rank,
    version_superseded,
)
from ctxselect.features.contradictions.reasons import (
    claim_reason,
    echoable,
    pair_conflicts,
    stated_figures,
    withheld_note,
)

__all__ = ["BLOCK_ROWS", "CLAIM_ALL_TEXTS_LIMIT", "MAX_LISTED_PAIRS", "PATTERN_LIMIT", "ConflictPair",
           "ConflictSummary", "claim_pairs", "claim_reason", "conflict_pairs", "conflict_summary",
           "drift_pairs", "echoable", "merge_contradictions", "pair_conflicts", "stated_figures",
           "version_rank", "version_superseded", "withheld_note"]
