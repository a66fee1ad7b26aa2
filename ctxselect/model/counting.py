"""Calling the caller's token counter: whatever it raises, or returns that is no count, becomes an
:class:`~ctxselect.errors.InputError` naming ``token_counter`` and what happened — never quoting a
chunk's text. An interrupt (``KeyboardInterrupt``, ``SystemExit``: no ``Exception``) passes."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ctxselect.errors import InputError, plain_reason

__all__ = ["count_tokens", "batch_counts", "token_length", "MESSAGE_CHARS"]

#: How much of a failing counter's own message an error quotes.
MESSAGE_CHARS = 100


def _failed(what: str, err: Exception, texts: Sequence[str]) -> InputError:
    """``what`` raised ``err``: the start of its message, unless that quotes one of ``texts``."""
    reason = plain_reason(err)
    if any(text.strip() and text[:40] in reason for text in texts):
        reason = "(its message quotes the text: not shown)"
    elif len(reason) > MESSAGE_CHARS:
        reason = reason[:MESSAGE_CHARS - 3] + "..."
    return InputError(field="token_counter", message=f"{what} raised {type(err).__name__}: {reason}",
                      expected="a count of the text's tokens")


def count_tokens(counter: Callable[[str], int], text: str) -> int:
    """``counter(text)``; when it raises, an :class:`InputError` saying what it raised."""
    try:
        return counter(text)
    except InputError:
        raise
    except Exception as err:  # noqa: BLE001 - the caller's code: any failure is an error of its input
        raise _failed("token_counter", err, (text,)) from None


def batch_counts(batch: Callable[[list[str]], Any], texts: list[str]) -> list:
    """``list(batch(texts))`` (a counter's ``count_batch``); when it raises or returns no list, an
    :class:`InputError` saying so (what it returned by its type only)."""
    try:
        got = batch(texts)
    except InputError:
        raise
    except Exception as err:  # noqa: BLE001 - as in count_tokens
        raise _failed("token_counter's count_batch", err, texts) from None
    try:
        return list(got)
    except Exception:  # noqa: BLE001 - None, a number ...
        raise InputError(field="token_counter", message=f"count_batch returned {type(got).__name__}",
                         expected="a list of counts, one per text") from None


def token_length(encoded: Any) -> int:
    """How many token ids a tokenizer's ``encode`` returned (``tokenizers.Encoding``'s ``.ids``, or a
    sequence); anything without a length is an :class:`InputError` naming its type."""
    ids = getattr(encoded, "ids", encoded)
    try:
        return len(ids)
    except Exception:  # noqa: BLE001 - None, a number ...
        raise InputError(field="token_counter", message=f"the tokenizer's encode returned {type(encoded).__name__}",
                         expected="a sequence of token ids") from None
