"""trace() as RAGScope traces (seed 002): by default a chunk reached the prompt exactly when its text
is a literal substring of one, positions count the in-context chunks in retrieval order, and
trace -> audit equals RAGScope's assembleContext -> audit on the same trace. Fuzzy matching is
opt-in and never counts a chunk whose numbers differ from the prompt's, nor several look-alikes
for one stretch of prompt."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxselect
from ctxselect.evaluate.trace import suffix_prefix_overlap


def assemble_context(chunks, prompts):
    """RAGScope's assembleContext, line by line (seed 002), over the chunks in retrieval order
    (rank, then the order given; chunks without a rank last), plus the fields the audit reads."""
    order = sorted(range(len(chunks)), key=lambda i: (chunks[i].get("rank") is None, chunks[i].get("rank") or i, i))
    llm_prompts = [p for p in prompts if p]  # .filter((p) => !!p)
    out, position = [], 0
    for j, i in enumerate(order):
        chunk = chunks[i]
        following = chunks[order[j + 1]]["text"] if j + 1 < len(order) else ""
        row = {"id": chunk["id"], "rank_retrieval": chunk.get("rank", j + 1), "tokens": chunk["tokens"],
               "overlap_with_next": suffix_prefix_overlap(chunk["text"], following) if following else 0.0,
               "score_missing": "relevance" not in chunk, "in_context": False, "context_position": None}
        if llm_prompts and chunk["text"]:  # if (!chunk.content) return chunk
            if any(chunk["text"] in p for p in llm_prompts):  # llmPrompts.some((p) => p.includes(...))
                row.update(in_context=True, context_position=position)
                position += 1
        out.append(row)
    return out


def observed(traced):
    return [(t.id, t.in_context, t.context_position) for t in traced]


@st.composite
def traces(draw):
    """Chunks over a tiny alphabet (so substrings, duplicates and empty texts happen), ranks given
    or not, and prompts assembled from some chunks in any order with noise between them."""
    n = draw(st.integers(0, 8))
    texts = draw(st.lists(st.text(alphabet="ab 1\n", max_size=6), min_size=n, max_size=n))
    ranks = draw(st.one_of(st.none(), st.permutations(range(1, n + 1))))
    chunks = []
    for k, text in enumerate(texts):
        chunk = {"id": f"c{k}", "text": text, "tokens": draw(st.integers(0, 50))}
        if ranks is not None:
            chunk["rank"] = ranks[k]
        if draw(st.booleans()):
            chunk["relevance"] = 0.5
        chunks.append(chunk)
    prompts = []
    for _ in range(draw(st.integers(0, 3))):
        picked = draw(st.lists(st.sampled_from(texts), max_size=n)) if texts else []
        noise = draw(st.text(alphabet="ab 1\n-", max_size=4))
        prompts.append(noise.join(picked) + draw(st.text(alphabet="ab1", max_size=3)))
    return chunks, prompts


@settings(max_examples=400, deadline=None)
@given(traces())
def test_trace_then_audit_equals_ragscope(trace):
    chunks, prompts = trace
    traced = ctxselect.trace(chunks, prompts)
    reference = assemble_context(chunks, prompts)
    assert observed(traced) == [(r["id"], r["in_context"], r["context_position"]) for r in reference]
    assert ctxselect.audit([t.to_dict() for t in traced]).to_dict() == ctxselect.audit(reference).to_dict()


# --- the seed's traces ----------------------------------------------------------------------------

POLICIES = ["Refunds take five business days.", "Shipping is free above fifty dollars.",
            "Support answers within a day.", "Passwords reset from the login page.",
            "Invoices are emailed monthly.", "Accounts close after a year idle.", "Gift cards never expire.",
            "Returns need the original box.", "Orders ship from the nearest store.", "Prices include tax."]


def retrieved(texts):
    return [{"id": f"r{k + 1}", "rank": k + 1, "text": t, "tokens": 40, "relevance": 0.5} for k, t in enumerate(texts)]


def test_seed_ten_retrieved_three_used():
    """"Your retriever fetched 10 chunks. Your LLM only used 3. RAGScope shows a precision score of
    30 out of 100" — and recommends "Reduce TOP_K 10→3"."""
    chunks = retrieved(POLICIES)
    prompt = "".join(f"Context:\n{POLICIES[k]}\n" for k in (6, 1, 3)) + "Question: can I return it?"
    report = ctxselect.audit([t.to_dict() for t in ctxselect.trace(chunks, prompt)])
    precision = report.subscores[0]
    assert (precision.score, precision.finding) == (30, "3/10 chunks used")
    assert precision.recommendation == "Reduce TOP_K 10→3 (only 3 chunks reached LLM)"
    assert report.to_dict() == ctxselect.audit(assemble_context(chunks, [prompt])).to_dict()


def test_seed_no_llm_span_reads_zero_and_no_chunks_read_a_hundred():
    traced = ctxselect.trace(retrieved(POLICIES[:4]), [])
    assert not any(t.in_context for t in traced)
    assert ctxselect.audit([t.to_dict() for t in traced]).subscores[0].score == 0
    none = ctxselect.audit([t.to_dict() for t in ctxselect.trace([], "Context: nothing")]).subscores[0]
    assert (none.score, none.finding) == (100, "no chunks")


def test_seed_a_chunk_without_content_never_matches():
    chunks = [{"id": "a", "text": "", "rank": 1, "tokens": 10}, *retrieved(POLICIES[:1])]
    traced = ctxselect.trace(chunks, "Context:\n" + POLICIES[0], match="fuzzy")
    assert [(t.id, t.in_context, t.context_position) for t in traced] == [("a", False, None), ("r1", True, 0)]


def test_positions_follow_retrieval_rank_not_the_prompt():
    """Seven of eight policies in the prompt, ranks 1 and 2 placed mid-prompt. RAGScope numbers the
    positions by retrieval rank (rank 3 lands in the middle: 88 − 12 = 76); numbering them in prompt
    order buried ranks 1 and 2 instead and gave 64."""
    chunks = retrieved(POLICIES[:8])
    prompt = "Context:\n" + "\n".join(POLICIES[r - 1] for r in (3, 4, 5, 1, 2, 6, 7)) + "\nQuestion: ?"
    traced = ctxselect.trace(chunks, prompt)
    assert [t.context_position for t in traced] == [0, 1, 2, 3, 4, 5, 6, None]
    precision = ctxselect.audit([t.to_dict() for t in traced]).subscores[0]
    assert (precision.score, precision.finding) == (76, "7/8 chunks used · 1 buried mid-context")


# --- look-alikes: never counted by default, nor by the opt-in fuzzy match -------------------------

def test_an_old_policy_version_does_not_reach_the_prompt():
    """The old version differs only in "14" vs "30": the default fuzzy match (threshold 90) used to
    count it as reached; the numbers guard refuses it even at threshold 50."""
    chunks = [{"id": "new", "text": "Refunds are possible within 30 days of purchase.", "rank": 1, "tokens": 12},
              {"id": "old", "text": "Refunds are possible within 14 days of purchase.", "rank": 2, "tokens": 12}]
    prompt = "Context:\n- Refunds are possible within 30 days of purchase.\nQuestion: how long?"
    for options in ({}, {"match": "fuzzy"}, {"match": "fuzzy", "fuzzy_threshold": 50}):
        assert [t.in_context for t in ctxselect.trace(chunks, prompt, **options)] == [True, False], options
    reformatted = "Context:\n- refunds are possible  within 30 days of purchase!\n"
    assert [t.match for t in ctxselect.trace(chunks, reformatted, match="fuzzy")] == ["fuzzy", "none"]


def test_ten_look_alikes_count_once():
    """Ten plan pages from one template, one of them in the prompt: 1/10 used, not 10/10."""
    plans = ["Basic", "Plus", "Pro", "Team", "Gold", "Silver", "Bronze", "Start", "Scale", "Prime"]
    chunks = retrieved([f"The {p} plan costs 10 dollars per month and includes 5 users." for p in plans])
    verbatim = f"Context:\n{chunks[2]['text']}\nQuestion: which plan?"
    reformatted = "Context:\n* the pro plan costs 10 dollars per month and includes 5 users\nQuestion: which plan?"
    for prompt, options, kind in [(verbatim, {}, "exact"), (verbatim, {"match": "fuzzy"}, "exact"),
                                  (reformatted, {"match": "fuzzy"}, "fuzzy")]:
        traced = ctxselect.trace(chunks, prompt, **options)
        assert [(t.id, t.match) for t in traced if t.in_context] == [("r3", kind)], options
        assert ctxselect.audit([t.to_dict() for t in traced]).subscores[0].finding == "1/10 chunks used"


def test_numbers_are_not_dropped_as_list_markers():
    """ "14." inside a line is a number, not a list marker: the normalised match used to drop it
    on both sides and call "within 14. Then" the same text as "within 30. Then"."""
    chunk = [{"id": "a", "text": "Refunds within 14. Then call us.", "rank": 1, "tokens": 8}]
    assert not ctxselect.trace(chunk, "refunds within 30. then call us.", match="fuzzy")[0].in_context
    assert ctxselect.trace(chunk, "refunds within 14. then call us.", match="fuzzy")[0].match == "normalised"
    listed = [{"id": "b", "text": "1. Open the console\n2. Click Refund", "rank": 1, "tokens": 8}]
    assert ctxselect.trace(listed, "Steps:\n1.  open the console\n2.  click refund", match="fuzzy")[0].match == "normalised"


def test_a_fuzzy_match_aligns_the_whole_chunk():
    """A prompt holding only the first sentence of a chunk does not make the chunk reached."""
    chunk = [{"id": "a", "text": "Refunds take five business days. Shipping is free above fifty dollars.",
              "rank": 1, "tokens": 14}]
    assert not ctxselect.trace(chunk, "refunds take five business days", match="fuzzy")[0].in_context


@pytest.mark.parametrize("threshold", [0, 100])
def test_fuzzy_threshold_bounds(threshold):
    chunk = [{"id": "a", "text": "Gift cards never expire.", "rank": 1, "tokens": 5}]
    traced = ctxselect.trace(chunk, "Context: gift  cards never expire!", match="fuzzy", fuzzy_threshold=threshold)
    assert traced[0].in_context is (threshold == 0)
