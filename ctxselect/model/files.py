"""Output files written whole or not at all, and small input files read whole under a cap.

Writing is atomic: a temporary file next to the target (``NAME.<random>.tmp``, removed on every
exit Python sees) is renamed over it when complete; a new file gets the mode the umask allows
(``0666 & ~umask``), an existing one keeps its mode, a symlink is written through (the link stays
a link), and a target that exists but is not a regular file (a directory, device or FIFO), is a file
the user may not write, or is a process's stream (``/dev/stdout``, ``/proc/self/fd/1``) is refused.
:func:`output_target` checks a target before any work; :func:`open_atomic` writes it;
:func:`write_jsonl` writes JSON lines through it. ``"-"`` (:data:`STDOUT`) names standard output for
:func:`open_output` and :func:`write_jsonl`: written as UTF-8 as it goes (a stream is never atomic), and left open.

:func:`read_small_file` reads a file that is read whole (a requirements file, a release-gate
baseline) as UTF-8 text, refusing a path that is not a regular file (a FIFO would wait for a
writer for ever, ``/dev/zero`` would be read until memory runs out) and one over its byte cap.
"""

from __future__ import annotations

import io
import json
import os
import secrets
import stat
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Iterable, Iterator, Mapping

from ctxselect.errors import InputError, plain_reason

__all__ = ["STDOUT", "is_stdout", "open_atomic", "open_output", "output_target", "path_text", "read_small_file",
           "write_jsonl"]

#: The name of standard output for an output file.
STDOUT = "-"


def is_stdout(path: str | os.PathLike | None) -> bool:
    """Whether an output path is ``-``, standard output."""
    return path is not None and str(path) == STDOUT


def path_text(path: str | os.PathLike) -> str:
    """``path`` as Unicode text for an output: a byte of the name that is not UTF-8 (which Python keeps
    as a lone surrogate, not text JSON can carry) shown as its escape, ``\\xff``; any other name as given."""
    name = os.fspath(path)
    if isinstance(name, bytes):
        return name.decode("utf-8", "backslashreplace")
    try:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate no file name's byte gives (a library caller's string)
        return name.encode("utf-8", "backslashreplace").decode("utf-8")


# Paths that name a process's open streams (``/dev/stdout`` may lead to a regular file when the
# output is redirected: renaming over it would replace the shell's file, not write to the stream).
_STREAM_PATHS = ("/proc/", "/dev/fd/", "/dev/stdin", "/dev/stdout", "/dev/stderr")


def _link_chain(path: str | os.PathLike) -> list[str]:
    """The absolute path and every symlink hop from it (at most 40)."""
    hop = os.path.abspath(path)
    chain = [hop]
    for _ in range(40):
        try:
            if not os.path.islink(hop):
                break
            hop = os.path.normpath(os.path.join(os.path.dirname(hop), os.readlink(hop)))
        except OSError:
            break
        chain.append(hop)
    return chain


def output_target(path: str | os.PathLike) -> Path:
    """The file a write to ``path`` replaces: symlinks resolved, checked before any work.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    Path
        The resolved target (the final target of a chain of symlinks).

    Raises
    ------
    InputError
        When the target exists but is not a regular file (a directory, device or FIFO: it is never
        replaced) or the user may not write it (renaming over it would replace it all the same), is a
        process's stream (``/dev/stdout``, ``/proc/self/fd/1``, even when that leads to a regular
        file), or its folder does not exist.
    """
    name = str(path)
    target = Path(os.path.realpath(path))
    if any(hop.startswith(_STREAM_PATHS) for hop in [*_link_chain(path), str(target)]):
        raise InputError(file=name, message="not a regular file (a process's stream); refusing to replace it",
                         expected="a path to a regular file")
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as err:
        raise InputError(file=name, message=f"cannot write: {err.strerror or err}") from None
    if mode is not None and not stat.S_ISREG(mode):
        raise InputError(file=name, message="not a regular file; refusing to replace it",
                         expected="a path to a regular file")
    if mode is not None and not os.access(target, os.W_OK):  # the rename would replace it all the same
        raise InputError(file=name, message="cannot write: Permission denied (the file is not writable)")
    if not target.parent.is_dir():
        raise InputError(file=name, message=f"cannot write: no folder {str(target.parent)!r}")
    return target


def _temporary_name(target: Path) -> str:
    base = target.name if len(os.fsencode(target.name)) <= 200 else "ctxselect-output"
    return str(target.with_name(f"{base}.{secrets.token_hex(6)}.tmp"))


@contextmanager
def open_atomic(path: str | os.PathLike, *, binary: bool = False) -> Iterator[IO]:
    """Open ``path`` for writing whole or not at all.

    The handle writes a temporary file next to the target (``NAME.<random>.tmp``, created
    exclusively) that is renamed over the target when the ``with`` block ends normally and removed
    on any exception (KeyboardInterrupt included). A new file gets ``0666 & ~umask``, an existing
    one keeps its mode; a symlink is written through (see :func:`output_target`).

    Parameters
    ----------
    path : str or path-like
    binary : bool
        A binary handle instead of UTF-8 text.

    Yields
    ------
    file object

    Raises
    ------
    InputError
        For a target that is not a regular file, and for any error creating, writing or renaming
        the file (naming ``path``, never the temporary file).
    """
    name = str(path)
    target = output_target(path)
    try:
        keep_mode = stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        keep_mode = None
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = _temporary_name(target)
        try:
            fd = os.open(tmp, flags, 0o666)  # the umask applies, as it does for any new file
            break
        except FileExistsError:
            continue
        except OSError as err:
            raise InputError(file=name, message=f"cannot write: {err.strerror or err}") from None
    else:  # pragma: no cover - 100 collisions of 48 random bits
        raise InputError(file=name, message="cannot write: no free temporary name")
    try:
        if keep_mode is not None:
            os.chmod(tmp, keep_mode)
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as handle:
            fd = -1
            yield handle
        os.replace(tmp, target)
    except BaseException as err:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(err, OSError) and err.filename in (None, tmp, str(target)):
            raise InputError(file=name, message=f"cannot write: {err.strerror or err}") from None
        raise


@contextmanager
def open_output(path: str | os.PathLike, *, binary: bool = False) -> Iterator[IO]:
    """:func:`open_atomic`, or standard output for ``"-"``: UTF-8 whatever the terminal's encoding,
    written as it goes, flushed and left open at the end."""
    if not is_stdout(path):
        with open_atomic(path, binary=binary) as handle:
            yield handle
        return
    sys.stdout.flush()
    stream = getattr(sys.stdout, "buffer", None)
    if stream is None:  # a text-only stream (an embedding program's): no bytes to write
        if binary:
            raise InputError(file="<stdout>", message="standard output takes no bytes here", expected="a file")
        yield sys.stdout
        sys.stdout.flush()
        return
    handle = stream if binary else io.TextIOWrapper(stream, encoding="utf-8", newline="\n", write_through=True)
    try:
        yield handle
    finally:
        if not binary:
            handle.detach()  # leaves standard output open
        stream.flush()


def write_jsonl(path: str | os.PathLike, rows: Iterable[Mapping[str, Any]]) -> int:
    """Write JSON objects one per line, atomically (see :func:`open_atomic`).

    Parameters
    ----------
    path : str or path-like
        ``"-"``: standard output (see :func:`open_output`).
    rows : iterable of dict

    Returns
    -------
    int
        The number of rows written.

    Raises
    ------
    InputError
        For a row that cannot be JSON (NaN, a lone surrogate, a set, nesting too deep) and for
        the target problems :func:`open_atomic` reports; the target is then left as it was.
    """
    count = 0
    with open_output(path) as out:
        for row in rows:
            try:
                out.write(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n")
            except (TypeError, ValueError, RecursionError) as err:
                reason = "a lone surrogate in a string" if isinstance(err, UnicodeEncodeError) else plain_reason(err)
                raise InputError(file=str(path), message=f"row {count + 1} cannot be written as JSON ({reason})") from None
            count += 1
    return count


def read_small_file(path: str | os.PathLike, *, limit: int, what: str, option: str, expected: str) -> str:
    """A file read whole as UTF-8 text (a byte-order mark at its start dropped), at most ``limit`` bytes.

    Parameters
    ----------
    path : str or path-like
    limit : int
        The most bytes taken; a larger file is refused, not read whole.
    what : str
        What the file is, for messages ("requirements file", "baseline").
    option : str
        The option that named the file (``--requirements``), named by every error.
    expected : str
        What a valid path names, for the error on one that is not a regular file.

    Returns
    -------
    str

    Raises
    ------
    InputError
        Naming the file and ``option``: a path that is not a regular file (refused before it is
        opened: a FIFO, a device, a folder), a file that cannot be opened or read, one larger than
        ``limit`` bytes, or bytes that are not UTF-8 text (with the line of the first bad byte).
    """
    name = str(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    try:
        regular = stat.S_ISREG(os.stat(path).st_mode)  # before opening: opening a FIFO waits for a writer
        if regular:
            with os.fdopen(os.open(path, flags), "rb") as handle:  # O_NONBLOCK: a FIFO swapped in never blocks
                regular = stat.S_ISREG(os.fstat(handle.fileno()).st_mode)
                raw = handle.read(limit + 1) if regular else b""
    except OSError as err:
        raise InputError(file=name, field=option, message=f"cannot open {what}: {err.strerror or err}") from None
    if not regular:
        raise InputError(file=name, field=option, message="not a regular file", expected=expected)
    if len(raw) > limit:
        raise InputError(file=name, field=option, message=f"larger than {limit:,} bytes")
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise InputError(file=name, line=line, field=option,
                         message=f"not UTF-8 text (byte 0x{raw[err.start]:02x})") from None
