"""Dumps and files in and out: dumps read, stream and round-trip; strict reading of JSONL (issue 11);
writes that are atomic, keep modes, follow symlinks, refuse what is not a regular file and leave
no temporary file behind."""

from __future__ import annotations

import errno
import io
import json
import os
import re
import stat
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import ctxselect
from ctxselect.errors import InputError
from ctxselect.model import io as dump_module
from ctxselect.model.io import open_atomic, output_target, read_jsonl, write_jsonl
from tests.conftest import EXAMPLES, ROOT

EXAMPLE = EXAMPLES / "support_desk.jsonl"
ROWS = [{"a": 1}, {"b": "two"}]
EXPECTED = '{"a": 1}\n{"b": "two"}\n'


@pytest.fixture
def umask():
    """Set a umask for one test and restore the old one."""
    saved = os.umask(0o022)
    yield os.umask
    os.umask(saved)


def temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


# -- permissions ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mask,expected", [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600), (0o002, 0o664)])
def test_a_new_file_gets_the_umask_mode(tmp_path, umask, mask, expected):
    umask(mask)
    out = tmp_path / "out.jsonl"
    assert write_jsonl(out, ROWS) == 2
    assert mode(out) == expected and out.read_text() == EXPECTED


@pytest.mark.parametrize("existing", [0o644, 0o604, 0o600, 0o440])
def test_an_existing_file_keeps_its_mode(tmp_path, umask, existing):
    umask(0o077)
    out = tmp_path / "out.jsonl"
    out.write_text("old\n")
    os.chmod(out, existing)
    write_jsonl(out, ROWS)
    assert mode(out) == existing and out.read_text() == EXPECTED


# -- symlinks and what is not a regular file -------------------------------------------------------


def test_a_symlink_is_written_through_and_stays_a_link(tmp_path):
    target = tmp_path / "real.jsonl"
    target.write_text("old\n")
    os.chmod(target, 0o640)
    (tmp_path / "hop").symlink_to("real.jsonl")
    link = tmp_path / "link.jsonl"
    link.symlink_to("hop")  # a chain of two links
    write_jsonl(link, ROWS)
    assert link.is_symlink() and (tmp_path / "hop").is_symlink()
    assert target.read_text() == EXPECTED and mode(target) == 0o640
    assert temporaries(tmp_path) == []


def test_a_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link.jsonl"
    link.symlink_to("sub/real.jsonl")
    (tmp_path / "sub").mkdir()
    write_jsonl(link, ROWS)
    assert link.is_symlink() and (tmp_path / "sub" / "real.jsonl").read_text() == EXPECTED


def test_a_symlink_into_another_folder_puts_the_temporary_file_there(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    link = tmp_path / "a" / "out.jsonl"
    link.symlink_to(tmp_path / "b" / "out.jsonl")
    seen = []

    def rows():
        seen.append((temporaries(tmp_path / "a"), temporaries(tmp_path / "b")))
        yield {"a": 1}

    write_jsonl(link, rows())
    assert seen[0][0] == [] and len(seen[0][1]) == 1  # renamed within one file system


def test_a_folder_is_not_replaced(tmp_path):
    folder = tmp_path / "folder"
    folder.mkdir()
    with pytest.raises(InputError, match=r"folder: not a regular file"):
        write_jsonl(folder, ROWS)
    assert folder.is_dir() and temporaries(tmp_path) == []


def test_a_fifo_is_not_replaced(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file"):
        write_jsonl(fifo, ROWS)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and temporaries(tmp_path) == []


@pytest.mark.parametrize("path", ["/dev/null", "/dev/stdout", "/dev/stderr", "/proc/self/fd/1", "/dev/fd/2"])
def test_devices_and_streams_are_not_replaced(path):
    before = os.stat(path).st_mode if os.path.exists(path) else None
    with pytest.raises(InputError, match="not a regular file"):
        write_jsonl(path, ROWS)
    with pytest.raises(InputError, match="not a regular file"):
        output_target(path)
    if before is not None:
        assert os.stat(path).st_mode == before


def test_a_link_to_a_stream_is_not_followed_into_a_file(tmp_path):
    link = tmp_path / "out.jsonl"
    link.symlink_to("/dev/stdout")
    with pytest.raises(InputError, match="not a regular file"):
        write_jsonl(link, ROWS)
    assert link.is_symlink()


# -- errors name the target ------------------------------------------------------------------------


def test_a_missing_folder_names_the_target(tmp_path):
    out = tmp_path / "nowhere" / "out.jsonl"
    with pytest.raises(InputError) as info:
        write_jsonl(out, ROWS)
    assert str(info.value).startswith(f"{out}: cannot write: no folder") and ".tmp" not in str(info.value)


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root may write a read-only folder")
def test_a_read_only_folder_names_the_target(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    os.chmod(folder, 0o500)
    try:
        with pytest.raises(InputError) as info:
            write_jsonl(folder / "out.jsonl", ROWS)
        assert "out.jsonl: cannot write: Permission denied" in str(info.value) and ".tmp" not in str(info.value)
    finally:
        os.chmod(folder, 0o700)


def test_a_failed_rename_names_the_target_and_cleans_up(tmp_path, monkeypatch):
    out = tmp_path / "out.jsonl"
    out.write_text("old\n")

    def refuse(src, dst):
        raise OSError(errno.EXDEV, "Invalid cross-device link", src, None, dst)

    monkeypatch.setattr(dump_module.os, "replace", refuse)
    with pytest.raises(InputError) as info:
        write_jsonl(out, ROWS)
    assert str(info.value) == f"{out}: cannot write: Invalid cross-device link"
    assert out.read_text() == "old\n" and temporaries(tmp_path) == []


def test_an_error_while_writing_names_the_target(tmp_path):
    out = tmp_path / "out.jsonl"
    with pytest.raises(InputError) as info:
        with open_atomic(out) as handle:
            handle.write("partial")
            raise OSError(errno.ENOSPC, "No space left on device")
    assert str(info.value) == f"{out}: cannot write: No space left on device"
    assert not out.exists() and temporaries(tmp_path) == []


def test_an_error_naming_another_file_is_not_relabelled(tmp_path):
    with pytest.raises(FileNotFoundError):
        with open_atomic(tmp_path / "out.jsonl"):
            open(tmp_path / "elsewhere.txt")
    assert temporaries(tmp_path) == []


@pytest.mark.parametrize("row,reason", [({"x": float("nan")}, "Out of range float values"),
                                        ({"x": {1, 2}}, "set is not JSON serializable"),
                                        ({"x": "\ud800"}, "a lone surrogate in a string")])
def test_a_row_that_is_not_json_names_the_target(tmp_path, row, reason):
    out = tmp_path / "out.jsonl"
    with pytest.raises(InputError) as info:
        write_jsonl(out, [{"ok": 1}, row])
    assert str(info.value).startswith(f"{out}: row 2 cannot be written as JSON (") and reason in str(info.value)
    assert not out.exists() and temporaries(tmp_path) == []


# -- temporary files ---------------------------------------------------------------------------------


def test_the_temporary_file_is_visible_and_next_to_the_target(tmp_path):
    seen = []

    def rows():
        yield {"a": 1}
        seen.extend(p.name for p in tmp_path.iterdir())
        yield {"b": "two"}

    write_jsonl(tmp_path / "out.jsonl", rows())
    assert len(seen) == 1 and re.fullmatch(r"out\.jsonl\.[0-9a-f]{12}\.tmp", seen[0]), seen
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]


def test_a_taken_temporary_name_is_skipped_not_overwritten(tmp_path, monkeypatch):
    names = iter(["aaaaaaaaaaaa", "aaaaaaaaaaaa", "bbbbbbbbbbbb"])
    monkeypatch.setattr(dump_module.secrets, "token_hex", lambda n: next(names))
    squatter = tmp_path / "out.jsonl.aaaaaaaaaaaa.tmp"
    squatter.write_text("someone else's\n")
    write_jsonl(tmp_path / "out.jsonl", ROWS)
    assert squatter.read_text() == "someone else's\n" and (tmp_path / "out.jsonl").read_text() == EXPECTED


def test_a_long_name_gets_a_short_temporary_name(tmp_path):
    out = tmp_path / ("x" * 240 + ".jsonl")
    write_jsonl(out, ROWS)
    assert out.read_text() == EXPECTED


@pytest.mark.parametrize("exception", [KeyboardInterrupt, SystemExit, RuntimeError, InputError])
def test_every_exit_python_sees_removes_the_temporary_file(tmp_path, exception):
    out = tmp_path / "out.jsonl"
    out.write_text("old\n")

    def rows():
        yield {"a": 1}
        raise exception("stop")

    with pytest.raises(exception):
        write_jsonl(out, rows())
    assert out.read_text() == "old\n" and temporaries(tmp_path) == []


def test_sigterm_during_a_cli_write_removes_the_temporary_file(tmp_path):
    script = (
        "import signal, sys, time\n"
        "from ctxselect.cli import core as cli\n"
        "from ctxselect.model.io import write_jsonl\n"
        "signal.signal(signal.SIGTERM, cli._terminate)\n"
        "def rows():\n"
        "    yield {'a': 1}\n"
        "    print('writing', flush=True)\n"
        "    time.sleep(60)\n"
        "    yield {'b': 2}\n"
        "write_jsonl(sys.argv[1], rows())\n"
    )
    out = tmp_path / "out.jsonl"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", script, str(out)], stdout=subprocess.PIPE, env=env)
    try:
        assert proc.stdout.readline() == b"writing\n"
        assert len(temporaries(tmp_path)) == 1
        proc.terminate()
        assert proc.wait(timeout=30) == 128 + 15
    finally:
        proc.kill()
        proc.stdout.close()
    assert not out.exists() and temporaries(tmp_path) == []


def test_the_cli_main_installs_the_sigterm_cleanup(monkeypatch):
    from ctxselect.cli import core as cli

    installed = {}
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    monkeypatch.setattr(cli.signal, "signal", lambda signum, handler: installed.setdefault(signum, handler))
    monkeypatch.setattr(cli, "app", lambda: None)
    cli.main()
    assert installed[cli.signal.SIGTERM] is cli._terminate
    with pytest.raises(SystemExit) as info:
        cli._terminate(15, None)
    assert info.value.code == 143


# -- the plot goes through the same writer ------------------------------------------------------------


def test_plot_bench_follows_the_umask_and_symlinks(tmp_path, umask):
    pytest.importorskip("matplotlib")
    from ctxselect.evaluate.bench import run_bench
    from ctxselect.evaluate.plot import plot_bench

    result = run_bench(list(ctxselect.read_dump(EXAMPLE)), ["greedy"])
    umask(0o027)
    link = tmp_path / "plot.png"
    link.symlink_to("real.png")
    plot_bench(result, link)
    assert link.is_symlink() and (tmp_path / "real.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert mode(tmp_path / "real.png") == 0o640 and temporaries(tmp_path) == []
    folder = tmp_path / "folder"
    folder.mkdir()
    with pytest.raises(InputError, match="not a regular file"):
        plot_bench(result, folder)


# -- reading -----------------------------------------------------------------------------------------


def write_bytes(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "in.jsonl"
    path.write_bytes(data)
    return path


def test_a_byte_order_mark_is_accepted_only_at_the_start(tmp_path):
    path = write_bytes(tmp_path, b'\xef\xbb\xbf{"a": 1}\r\n\n{"b": 2}\n')
    assert list(read_jsonl(path)) == [(1, {"a": 1}), (3, {"b": 2})]
    path = write_bytes(tmp_path, b'{"a": 1}\n\xef\xbb\xbf{"b": 2}\n')
    with pytest.raises(InputError, match="line 2: malformed JSON"):
        list(read_jsonl(path))


@pytest.mark.parametrize("data,fragment", [
    (b'{"a": "caf\xc3"}\n', "line 1: not UTF-8 text (byte 0xc3 at byte 11 of the line)"),
    (b'{"a": 1}\n{"b": "\xed\xa0\x80"}\n', "line 2: not UTF-8 text (byte 0xed"),  # an encoded surrogate
    (b'{"a": 1}\n\x1f\x8b\n', "line 2: not UTF-8 text (byte 0x8b"),  # gzip's hint is for line 1 only
    (b'{"a": {"b": 1, "b": 2}}\n', "line 1: duplicate key 'b' in a JSON object"),
    (b'{"a\\n": 1, "a\\n": 2}\n', "duplicate key 'a\\n'"),
    (b'["\\ud800"]\n', "line 1: a JSON string holds a lone surrogate (\\ud800)"),
    (b'[{"x": ["\\uDBFF"]}]\n', "lone surrogate (\\udbff)"),
    (b'{"a": Infinity}\n', "line 1: malformed JSON (Infinity is not valid JSON)"),
])
def test_read_errors_name_the_file_and_line(tmp_path, data, fragment):
    path = write_bytes(tmp_path, data)
    with pytest.raises(InputError) as info:
        list(read_jsonl(path, what="dump"))
    assert str(info.value).startswith(f"{path}, line ") and fragment in str(info.value), str(info.value)


def test_a_surrogate_pair_is_text(tmp_path):
    path = write_bytes(tmp_path, b'{"emoji": "\\ud83d\\ude00", "escaped": "\\\\ud800"}\n')
    assert list(read_jsonl(path)) == [(1, {"emoji": "\U0001f600", "escaped": "\\ud800"})]


def test_the_line_cap_is_exact(tmp_path, monkeypatch):
    monkeypatch.setattr(dump_module, "MAX_LINE_BYTES", 100)
    fits = b'{"a": "' + b"x" * 90 + b'"}\n'
    assert len(fits) == 100
    assert list(read_jsonl(write_bytes(tmp_path, fits + fits)))[1][0] == 2
    with pytest.raises(InputError, match=r"line 2: line longer than 100 bytes"):
        list(read_jsonl(write_bytes(tmp_path, fits + b" " + fits)))
    with pytest.raises(InputError, match=r"line 1: line longer than 100 bytes"):
        list(read_jsonl(write_bytes(tmp_path, b" " * 500)))  # no newline at all


def test_a_pipe_is_read_as_a_stream(tmp_path):
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(EXAMPLE.read_bytes()))
    writer.start()
    try:
        assert [q.query_id for q in ctxselect.read_dump(fifo)] == [q.query_id for q in ctxselect.read_dump(EXAMPLE)]
    finally:
        writer.join(timeout=10)


def test_query_text_is_a_string_or_null(tmp_path):
    line = {"query_id": "q", "requirements": {"token_budget": 10},
            "candidates": [{"id": "c", "source": "s", "tokens": 1, "relevance": 0.5}]}
    for value, text in [(None, ""), ("", ""), ("why?", "why?")]:
        assert ctxselect.Query.from_dict({**line, "query": value}).query == text
    assert ctxselect.Query.from_dict(line).query == ""
    for value in (0, [], {}, False, 1.5):
        with pytest.raises(InputError, match=r"query 'q', field 'query': expected a string"):
            ctxselect.Query.from_dict({**line, "query": value})


def test_selected_ids_are_unique(tmp_path):
    line = {"query_id": "q", "requirements": {"token_budget": 10}, "selected": ["a", "b", "a"],
            "candidates": [{"id": k, "source": "s", "tokens": 1, "relevance": 0.5} for k in "ab"]}
    with pytest.raises(InputError, match=r"candidate 'a', field 'selected': duplicate id in selected"):
        ctxselect.Query.from_dict(line)


def test_a_dump_round_trips_hostile_strings(tmp_path):
    hostile = ["[/x]", "a\nb", "\x1b[31m", "\u202e", "é", "\U0001f600"]
    line = {"query_id": "q\x00", "query": "\t", "requirements": {"token_budget": 10},
            "candidates": [{"id": h, "source": h, "tokens": 1, "relevance": 0.5, "text": h} for h in hostile]}
    out = tmp_path / "out.jsonl"
    ctxselect.write_dump(out, [line])
    query = next(ctxselect.read_dump(out))
    assert query.query_id == "q\x00" and [c.id for c in query.candidates] == hostile
    assert json.loads(out.read_text(encoding="utf-8"))["candidates"][4]["text"] == "é"


# -- dumps ---------------------------------------------------------------------------------------

def test_example_dump_reads():
    queries = list(ctxselect.read_dump(EXAMPLE))
    assert [q.query_id for q in queries] == ["support-refund-annual", "support-billing-status",
                                             "support-refund-window"]
    first = queries[0]
    assert first.requirements.token_budget == 600
    assert first.selected[0] == "policy-refund-v2"
    assert first.extra["meta"]["note"].startswith("selected")


def test_read_dump_streams(tmp_path):
    path = tmp_path / "d.jsonl"
    good = {"query_id": "a", "requirements": {"token_budget": 5},
            "candidates": [{"id": "x", "source": "s", "tokens": 1, "relevance": 0.1}]}
    path.write_text(json.dumps(good) + "\n{broken\n")
    stream = ctxselect.read_dump(path)
    assert next(stream).query_id == "a"  # the good line arrives before the bad one is read
    with pytest.raises(ctxselect.InputError, match="line 2"):
        next(stream)


def test_round_trip(tmp_path):
    queries = list(ctxselect.read_dump(EXAMPLE))
    out = tmp_path / "copy.jsonl"
    assert ctxselect.write_dump(out, queries) == 3
    again = list(ctxselect.read_dump(out))
    for a, b in zip(queries, again):
        assert a.requirements == b.requirements
        assert a.candidates == b.candidates
        assert (a.selected, a.gold, dict(a.extra)) == (b.selected, b.gold, dict(b.extra))
        pa, pb = ctxselect.pack(a.candidates, a.requirements), ctxselect.pack(b.candidates, b.requirements)
        assert ctxselect.inspect(a.candidates, a.requirements).metrics == \
            ctxselect.inspect(b.candidates, b.requirements).metrics
        np.testing.assert_array_equal(pa.timestamp, pb.timestamp)


def test_write_dump_is_all_or_nothing(tmp_path):
    out = tmp_path / "out.jsonl"
    out.write_text("previous content\n")
    good = {"query_id": "a", "requirements": {"token_budget": 5},
            "candidates": [{"id": "x", "source": "s", "tokens": 1, "relevance": 0.1}]}
    bad = dict(good, query_id="b", candidates=[{"id": "x", "source": "s", "tokens": 0, "relevance": 0.1}])
    with pytest.raises(ctxselect.InputError, match="query 'b'"):
        ctxselect.write_dump(out, [good, bad])
    assert out.read_text() == "previous content\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]

