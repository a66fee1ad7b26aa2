"""Contradictions, the one room for them: detection for a call (:mod:`.detect`; field and version
conflicts as per-value codes, :mod:`.fields`), counting and
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
    version_pairs,
    version_rank,
    version_superseded,
)
from ctxselect.features.contradictions.fields import (
    disagree_on_codes,
    disagree_on_fields,
    disagree_on_versions,
    field_pairs,
    union_contradictions,
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
           "disagree_on_codes", "disagree_on_fields", "disagree_on_versions", "drift_pairs", "echoable", "field_pairs",
           "merge_contradictions", "pair_conflicts", "stated_figures", "union_contradictions", "version_pairs",
           "version_rank", "version_superseded", "withheld_note"]
