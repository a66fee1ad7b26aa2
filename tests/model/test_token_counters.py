"""Token counters: per-character counting of scripts without spaces, named counters that never
download, tokenizer objects, and the batch interface packing uses."""

import gzip
import hashlib
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import ctxselect
from ctxselect.errors import InputError
from ctxselect.model import tokens
from ctxselect.model.tokens import WORD, TokenizerCounter, default_token_counter, resolve_token_counter


@pytest.mark.parametrize("text,expected", [
    ("你好世界", 4),
    ("東京2020年", 5),  # 3 characters + 1.3 x one word ("2020"): ceil(4.3)
    ("안녕하세요 세계", 7),  # Hangul syllables, though spaced, count one each
    ("hello 世界。", 5),  # ceil(1.3 + 3): the ideographic full stop counts
    ("สวัสดีครับ", 10),
    ("\U00020000\U0002A6D6", 2),  # astral CJK ideographs (not word characters) count too
    ("ＡＢＣ", 3),  # full-width forms
])
def test_scripts_without_spaces_count_one_token_a_character(text, expected):
    assert default_token_counter(text) == expected


_SPACED = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60).filter(
    lambda t: not tokens._PER_CHARACTER.search(t))


@given(_SPACED)
def test_text_without_such_characters_counts_as_it_always_did(text):
    assert default_token_counter(text) == max(1, math.ceil(1.3 * len(WORD.findall(text))))


# -- named counters ---------------------------------------------------------------------------

def _forget(name: str):
    """Unload a tiktoken encoding and ctxselect's named counters, so the next use loads it again."""
    import tiktoken.registry
    tiktoken.registry.ENCODINGS.pop(name, None)
    tokens._named_counter.cache_clear()


@pytest.fixture
def no_network(monkeypatch):
    """Any HTTP request fails the test."""
    requests = pytest.importorskip("requests")

    def refuse(*args, **kwargs):
        raise AssertionError(f"a download was attempted: {args}")

    monkeypatch.setattr(requests, "get", refuse)
    monkeypatch.setattr(requests.Session, "request", refuse)


def test_a_tiktoken_encoding_missing_from_the_cache_is_an_error_not_a_download(tmp_path, monkeypatch, no_network):
    pytest.importorskip("tiktoken")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty"))
    _forget("cl100k_base")
    try:
        with pytest.raises(InputError) as info:
            resolve_token_counter("tiktoken:cl100k_base")
        message = str(info.value)
        assert message.startswith("field 'token_counter': tiktoken's cl100k_base file is not on this machine")
        assert "never downloads" in message and str(tmp_path / "empty") in message
        assert "'bpe-openai:cl100k_base'" in message and "\n" not in message
        monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # caching off: tiktoken would always download
        with pytest.raises(InputError, match="disabled: TIKTOKEN_CACHE_DIR is empty"):
            ctxselect.select([{"id": "a", "text": "x"}], {"token_budget": 5}, token_counter="tiktoken:cl100k_base")
    finally:
        _forget("cl100k_base")


def test_a_tiktoken_encoding_in_the_cache_counts_as_the_real_bpe(tmp_path, monkeypatch, no_network):
    pytest.importorskip("tiktoken")
    bpe = pytest.importorskip("bpe_openai")
    import tiktoken_ext.openai_public  # noqa: F401  (the URL tiktoken keys its cache by)

    url = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
    shipped = Path(bpe.__file__).parent / "data" / "cl100k_base.tiktoken.gz"
    cache = tmp_path / "tiktoken"
    cache.mkdir()
    (cache / hashlib.sha1(url.encode()).hexdigest()).write_bytes(gzip.decompress(shipped.read_bytes()))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    _forget("cl100k_base")
    try:
        counter = resolve_token_counter("tiktoken:cl100k_base")
        assert resolve_token_counter("tiktoken:cl100k_base") is counter  # loaded once
        reference = bpe.get_encoding("cl100k_base")
        texts = ["The refund policy changed.", "退款政策已于2024年3月更改。", "<|endoftext|> is plain text here"]
        assert [counter(t) for t in texts] == [len(reference.encode_ordinary(t)) for t in texts]
        assert counter.count_batch(texts) == [counter(t) for t in texts]
    finally:
        _forget("cl100k_base")


def test_named_counter_errors_name_the_field_and_what_is_expected():
    pytest.importorskip("tiktoken")
    with pytest.raises(InputError, match=r"^field 'token_counter': tiktoken has no encoding 'nope'; expected one of .*cl100k_base"):
        resolve_token_counter("tiktoken:nope")
    with pytest.raises(InputError, match=r"^field 'token_counter': unknown token counter 'sentencepiece:x'; expected a callable"):
        resolve_token_counter("sentencepiece:x")
    with pytest.raises(InputError, match=r"^field 'token_counter': expected a callable .* found 42$"):
        ctxselect.set_token_counter(42)
    assert ctxselect.get_token_counter() is default_token_counter


def test_bpe_openai_named_counter_and_the_process_wide_setting():
    bpe = pytest.importorskip("bpe_openai")
    reference = bpe.get_encoding("o200k_base")
    ctxselect.set_token_counter("bpe-openai:o200k_base")
    try:
        packed = ctxselect.pack([{"id": "a", "source": "s", "relevance": 0.5, "text": "北京是中华人民共和国的首都"}],
                                {"token_budget": 50})
        assert packed.tokens.tolist() == [len(reference.encode_ordinary("北京是中华人民共和国的首都"))]
    finally:
        ctxselect.set_token_counter(None)
    with pytest.raises(InputError, match="bpe-openai has no encoding 'nope'"):
        resolve_token_counter("bpe-openai:nope")


# -- tokenizer objects and batches -------------------------------------------------------------

def _hf_tokenizer():
    tk = pytest.importorskip("tokenizers")
    vocab = {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "refund": 3, "policy": 4, "changed": 5, ".": 6}
    tokenizer = tk.Tokenizer(tk.models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = tk.pre_tokenizers.Whitespace()
    tokenizer.post_processor = tk.processors.TemplateProcessing(single="[CLS] $A [SEP]",
                                                                special_tokens=[("[CLS]", 1), ("[SEP]", 2)])
    return tokenizer


def test_a_hugging_face_tokenizer_counts_without_special_tokens():
    tokenizer = _hf_tokenizer()
    assert len(tokenizer.encode("refund policy changed.").ids) == 6  # with [CLS] and [SEP]
    counter = resolve_token_counter(tokenizer)
    assert isinstance(counter, TokenizerCounter)
    assert counter("refund policy changed.") == 4
    assert counter.count_batch(["refund policy", "changed . . unknown words"]) == [2, 5]
    cands = [{"id": "a", "source": "s", "relevance": 0.9, "text": "refund policy changed."},
             {"id": "b", "source": "s", "relevance": 0.5, "text": "policy"}]
    selection = ctxselect.select(cands, {"token_budget": 4}, token_counter=tokenizer, method="greedy")
    assert selection.ids == ["a"]
    assert ctxselect.pack(cands, {"token_budget": 4}, token_counter=tokenizer).tokens.tolist() == [4, 1]


class _BatchCounter:
    def __init__(self, result=None):
        self.batches, self.singles, self.result = [], [], result

    def __call__(self, text):
        self.singles.append(text)
        return len(text)

    def count_batch(self, texts):
        self.batches.append(list(texts))
        return self.result if self.result is not None else [len(t) for t in texts]


def test_packing_counts_every_text_of_a_call_in_one_batch():
    counter = _BatchCounter()
    cands = [{"id": str(k), "source": "s", "relevance": 0.5, "text": text}
             for k, text in enumerate(["aaa", "bb", "aaa", "c"])]
    cands.append({"id": "given", "source": "s", "relevance": 0.5, "text": "not counted", "tokens": 7})
    packed = ctxselect.pack(cands, {"token_budget": 10}, token_counter=counter)
    assert packed.tokens.tolist() == [3, 2, 3, 1, 7]
    assert counter.batches == [["aaa", "bb", "c"]] and counter.singles == []
    assert ctxselect.Candidate.from_dict({"id": "x", "source": "s", "relevance": 1, "text": "abcd"},
                                         token_counter=counter).tokens == 4
    with pytest.raises(InputError, match=r"^field 'token_counter': count_batch returned 1 counts for 3 texts"):
        ctxselect.pack(cands, {"token_budget": 10}, token_counter=_BatchCounter(result=[1]))


def test_an_object_with_neither_encode_nor_call_is_refused():
    with pytest.raises(InputError, match="field 'token_counter'"):
        resolve_token_counter(object())
    with pytest.raises(InputError, match="field 'token_counter'"):
        ctxselect.pack([{"id": "a", "source": "s", "relevance": 0.5, "text": "x"}], {"token_budget": 5},
                       token_counter=3.5)


SECRET = "the chunk's own secret text, never to be quoted in an error message"


def _raises(error):
    def counter(text):
        raise error
    return counter


class _Tokenizer:
    def __init__(self, returned):
        self.returned = returned

    def encode(self, text):
        return self.returned


class _BadBatch:
    def __init__(self, batch):
        self.count_batch = batch

    def __call__(self, text):
        return 1


@pytest.mark.parametrize("counter, expected", [
    (_raises(RuntimeError("model server down")), "token_counter raised RuntimeError: model server down"),
    (_raises(KeyError(SECRET)), "token_counter raised KeyError: (its message quotes the text: not shown)"),
    (_raises(ValueError("x" * 500)), "token_counter raised ValueError: " + "x" * 97 + "..."),
    (_Tokenizer(None), "the tokenizer's encode returned NoneType; expected a sequence of token ids"),
    (_Tokenizer(3), "the tokenizer's encode returned int"),
    (_BadBatch(lambda texts: None), "count_batch returned NoneType; expected a list of counts, one per text"),
    (_BadBatch(_raises(RuntimeError("batch down"))), "token_counter's count_batch raised RuntimeError: batch down"),
])
def test_a_counter_that_misbehaves_is_an_input_error(counter, expected):
    """A counter that raised (RuntimeError, KeyError ...) escaped as itself from Candidate's
    counting; count_batch returning None, or encode returning None, was a TypeError from len() or
    list(). Each is now an InputError naming token_counter (and the candidate, where one is being
    read) and what happened, never quoting the chunk's text."""
    chunk = {"id": "c7", "source": "s", "relevance": 0.5, "text": SECRET}
    batched = hasattr(counter, "count_batch") or isinstance(counter, _Tokenizer)  # all texts at once: no candidate
    calls = [lambda: ctxselect.pack([chunk], {"token_budget": 10}, token_counter=counter),
             lambda: ctxselect.select([chunk], {"token_budget": 10}, token_counter=counter, method="greedy")]
    if not isinstance(counter, _BadBatch):  # one text: count_batch is not called
        calls.append(lambda: ctxselect.Candidate.from_dict(chunk, token_counter=counter))
    for k, call in enumerate(calls):
        with pytest.raises(InputError) as err:
            call()
        message = str(err.value)
        assert "field 'token_counter'" in message and expected in message, message
        assert "secret" not in message
        assert ("candidate 'c7'" in message) == (not batched or k == 2), message


def test_an_interrupt_in_a_counter_is_not_caught():
    with pytest.raises(KeyboardInterrupt):
        ctxselect.pack([{"id": "a", "source": "s", "relevance": 0.5, "text": "x"}], {"token_budget": 5},
                       token_counter=_raises(KeyboardInterrupt()))
