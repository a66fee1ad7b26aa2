"""terminal_text: what reaches a terminal is printable, everything else escaped."""

from pathlib import Path

from ctxselect.cli.terminal import terminal_text


def test_terminal_text_escapes_exactly_the_non_printable():
    assert terminal_text("plain [red]x[/red] é 漢字 😀") == "plain [red]x[/red] é 漢字 😀"
    assert terminal_text("a\nb\rc\td") == "a\\nb\\rc\\td"
    assert terminal_text("\x00\x1b\x7f\x85\x9b") == "\\x00\\x1b\\x7f\\x85\\x9b"
    bidi = "".join(chr(c) for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)])
    assert terminal_text(bidi) == "".join(f"\\u{c:04x}" for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)])
    assert terminal_text("\u2028\u2029\ud800\U000e0001") == "\\u2028\\u2029\\ud800\\U000e0001"
    assert terminal_text(Path("x\ny")) == "x\\ny"
