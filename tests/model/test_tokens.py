"""Token counting: the default counter and a pluggable one."""

import ctxselect


def test_pluggable_token_counter():
    cands = [{"id": "a", "source": "s", "relevance": 0.5, "text": "abcdefgh"}]
    assert ctxselect.pack(cands, {"token_budget": 5}, token_counter=len).tokens.tolist() == [8]
    ctxselect.set_token_counter(lambda text: 3)
    try:
        assert ctxselect.pack(cands, {"token_budget": 5}).tokens.tolist() == [3]
    finally:
        ctxselect.set_token_counter(None)
    assert ctxselect.pack(cands, {"token_budget": 5}).tokens.tolist() == [2]

