"""Files out (issue 11): writes that are atomic, keep modes, follow symlinks, refuse what is not a
regular file and leave no temporary file behind."""

from __future__ import annotations

import errno
import io
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import ctxselect
from ctxselect.errors import InputError
from ctxselect.model import files as files_module
from ctxselect.model.files import open_atomic, output_target, write_jsonl
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

    monkeypatch.setattr(files_module.os, "replace", refuse)
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
    monkeypatch.setattr(files_module.secrets, "token_hex", lambda n: next(names))
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


def test_a_file_the_user_may_not_write_is_refused_not_replaced(tmp_path, monkeypatch):
    # the rename replaced it all the same (a read-only file, another user's file in a shared folder)
    out = tmp_path / "theirs.jsonl"
    out.write_text("theirs\n")
    real = os.access
    monkeypatch.setattr(files_module.os, "access", lambda p, m: False if Path(p) == out.resolve() else real(p, m))
    with pytest.raises(InputError) as info:
        write_jsonl(out, ROWS)
    assert str(info.value) == f"{out}: cannot write: Permission denied (the file is not writable)"
    assert out.read_text() == "theirs\n" and sorted(p.name for p in tmp_path.iterdir()) == ["theirs.jsonl"]


def test_the_cli_refuses_another_users_file_as_that_user():
    # as the user it runs as: root may write anything, so as root it runs the CLI as nobody (setpriv)
    import shutil
    import tempfile

    as_root = hasattr(os, "geteuid") and os.geteuid() == 0
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    if as_root and (shutil.which("setpriv") is None or subprocess.run(
            [*nobody, sys.executable, "-m", "ctxselect", "--version"], capture_output=True, cwd=str(ROOT)).returncode):
        pytest.skip("root cannot run the CLI as another user (no setpriv, or its packages in a private folder)")
    folder = Path(tempfile.mkdtemp(prefix="ctxselect-perm-", dir="/tmp"))
    try:
        os.chmod(folder, 0o777)
        dump = folder / "in.jsonl"
        dump.write_text(json.dumps({"query_id": "q", "query": "refunds", "requirements": {"token_budget": 50},
                                    "candidates": [{"id": "a", "source": "s", "relevance": 0.5, "tokens": 5,
                                                    "text": "refunds"}]}) + "\n")
        os.chmod(dump, 0o644)
        theirs = folder / "theirs.jsonl"
        theirs.write_text("not yours\n")
        os.chmod(theirs, 0o444)  # read-only for its owner too
        command = [sys.executable, "-m", "ctxselect", "select", "-q", str(dump), "--out", str(theirs)]
        if as_root:
            command = [*nobody, *command]
        env = {**os.environ, "CTXSELECT_CACHE_DIR": str(folder / "cache"), "HOME": str(folder)}
        out = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600, cwd=str(ROOT))
        assert out.returncode == 2, out.stderr[-2000:]
        assert out.stderr.strip().endswith(f"{theirs}: cannot write: Permission denied (the file is not writable)")
        assert theirs.read_text() == "not yours\n" and os.stat(theirs).st_uid == os.geteuid()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_read_small_file_refuses_what_is_not_a_regular_file_before_opening_it(tmp_path, monkeypatch):
    """The one reader of small input files (requirements, baselines): a FIFO is refused without
    being opened (opening it would wait for a writer), as are a device and a folder."""
    from ctxselect.model.files import read_small_file

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    opened = []
    real_open = os.open
    monkeypatch.setattr(os, "open", lambda *a, **k: opened.append(a[0]) or real_open(*a, **k))
    for path in (fifo, "/dev/zero", tmp_path):
        with pytest.raises(InputError, match=r"field '--x': not a regular file; expected a text file$"):
            read_small_file(path, limit=10, what="x file", option="--x", expected="a text file")
    assert opened == []
    text = tmp_path / "t.txt"
    text.write_bytes(b"\xef\xbb\xbfcaf\xc3\xa9")
    assert read_small_file(text, limit=10, what="x file", option="--x", expected="a text file") == "café"
    with pytest.raises(InputError, match=r"t\.txt, field '--x': larger than 5 bytes$"):
        read_small_file(text, limit=5, what="x file", option="--x", expected="a text file")
