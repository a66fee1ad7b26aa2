"""User strings on the terminal: shown as data, never as markup or control sequences.

User strings (ids, query ids, sources, trace ids, file names, and messages that quote them) reach
the terminal as data: never as rich markup or emoji codes, and with every non-printable character
(control characters such as newline, tab and ESC, DEL, C1 controls, bidirectional overrides and
isolates, lone surrogates) shown as its escape (``\\n``, ``\\x1b``, ``\\u202e``) — see
:func:`terminal_text`. ``--json`` output is JSON (ASCII, every such character escaped by JSON).
"""

from __future__ import annotations

import os

from rich.markup import escape

__all__ = ["terminal_text"]

_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(ch: str) -> str:
    if ch in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def terminal_text(value: object) -> str:
    """A user string made safe to print: one line, no control sequence.

    Every character that is not printable (``str.isprintable``: C0 and C1 control characters
    including newline, tab and ESC, DEL, format characters such as the bidirectional overrides
    U+202A–U+202E and isolates U+2066–U+2069, line and paragraph separators, lone surrogates) is
    replaced by its Python escape (``\\n``, ``\\x1b``, ``\\u202e``). Rich markup is left alone: wrap
    the result in :func:`rich.markup.escape` (as :func:`_data` does) before a rich console prints it.

    Parameters
    ----------
    value : object
        Converted with ``str``.

    Returns
    -------
    str
    """
    text = str(value)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else _escaped(ch) for ch in text)


def _data(value: object) -> str:
    """A user string for rich markup: escaped characters, markup shown literally."""
    return escape(terminal_text(value))


def _error_line(message: object) -> str:
    return f"ctxselect: error: {terminal_text(message)}"


def columns_width() -> int | None:
    """``COLUMNS`` as a width when it is a plain number of 20-10,000; 200 when it is set to
    anything else; None when unset (the terminal's own width)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isascii() and columns.isdecimal() and 20 <= int(columns) <= 10_000:
        return int(columns)
    return 200 if columns else None


def sane_terminal_environment() -> None:
    """Drop a ``COLUMNS`` or ``LINES`` that is no plain number from this process's environment:
    rich reads them with ``str.isdigit`` and ``int``, and "²" (a digit to ``isdigit``) raised
    ValueError from every command."""
    for name in ("COLUMNS", "LINES"):
        value = os.environ.get(name)
        if value is not None and not (value.isascii() and value.isdecimal()):
            del os.environ[name]
