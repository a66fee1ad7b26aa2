"""How a command talks besides its data: status lines, progress bars and the log, all on stderr.

Data (tables, JSON, a dump written to ``-``) goes to standard output; everything else goes to
standard error: status lines ("wrote 20 queries to g.jsonl"), progress bars (rich, only when
stderr is a terminal, only for more than one query) and, with ``--verbose``, the ``ctxselect``
logger (``-v`` INFO: why a gate was relaxed or a call fell back; ``-vv`` DEBUG: each call's
timings). ``--quiet`` turns off the status lines and the progress bars (errors still print).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from contextlib import contextmanager
from typing import Annotated, Any, Callable, Iterator

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ctxselect.cli.terminal import terminal_text
from ctxselect.errors import InputError
from ctxselect.model.parquet import is_parquet

__all__ = ["Output", "QuietFlag", "VerboseFlag", "progress_console", "write_json"]

QuietFlag = Annotated[bool, typer.Option("--quiet", "-q", help="No status lines or progress bars on stderr.")]
VerboseFlag = Annotated[int, typer.Option("--verbose", "-v", count=True, show_default=False,
                                          help="Log to stderr: -v why gates were relaxed or calls fell back, "
                                               "-vv each call's timings.")]

_LOG_FORMAT = "ctxselect: %(levelname)s: %(message)s"
_COUNT_LIMIT = 1 << 30  # a bar's total is counted for JSONL files up to 1 GiB (else: a running count)


def write_json(data: Any) -> None:
    """``data`` on standard output as indented JSON: the one writer of every command's ``--json``.
    Strict JSON: a NaN or an infinity in ``data`` (a bug) is a ValueError, never a ``NaN`` token."""
    sys.stdout.write(json.dumps(data, indent=2, allow_nan=False) + "\n")


def progress_console() -> Console:
    """The console progress bars draw on (standard error; tests replace it to play a terminal)."""
    from ctxselect.cli.core import columns_width

    return Console(stderr=True)


class _EscapingFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return terminal_text(super().format(record))


def query_count(path: object) -> int | None:
    """How many queries a dump holds, when that is cheap to know (a Parquet file's metadata, the
    non-blank lines of a JSONL file up to 1 GiB); None for standard input, a pipe or a large file."""
    name = str(path)
    try:
        if name == "-" or not os.path.isfile(name):
            return None
        if is_parquet(name):
            import pyarrow.parquet as pq

            return pq.ParquetFile(name).metadata.num_rows
        if os.path.getsize(name) > _COUNT_LIMIT:
            return None
        with open(name, "rb") as handle:
            return sum(1 for line in handle if line.strip())
    except Exception:  # noqa: BLE001 - a hint only: the reader reports the real problem
        return None


class Output:
    """One command's status lines, progress bars and log handler (a context manager)."""

    def __init__(self, quiet: bool = False, verbose: int = 0) -> None:
        if quiet and verbose:
            raise InputError(field="--quiet", message="--quiet and --verbose together", expected="one of them")
        self.quiet, self.verbose = quiet, verbose
        self._handler: logging.Handler | None = None
        self._level = logging.NOTSET

    def __enter__(self) -> "Output":
        if self.verbose:
            logger = logging.getLogger("ctxselect")
            self._handler = logging.StreamHandler(sys.stderr)
            self._handler.setFormatter(_EscapingFormatter(_LOG_FORMAT))
            self._level = logger.level
            logger.setLevel(logging.INFO if self.verbose == 1 else logging.DEBUG)
            logger.addHandler(self._handler)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._handler is not None:
            logger = logging.getLogger("ctxselect")
            logger.removeHandler(self._handler)
            logger.setLevel(self._level)
            self._handler = None

    def status(self, text: str) -> None:
        """A status line on stderr (user strings in it already escaped), unless ``--quiet``."""
        if not self.quiet:
            typer.echo(text, err=True)

    @contextmanager
    def progress(self, label: str, total: int | None = None, dumps: list | None = None
                 ) -> Iterator[Callable[[int], None]]:
        """A progress bar on stderr; yields ``done(k)`` (k queries finished). Drawn only when
        stderr is a terminal, not ``--quiet``, and there is more than one query (or an unknown
        number, from a stream). ``dumps``: count the total from these files (only when drawn)."""
        console = progress_console()
        shown = not self.quiet and console.is_terminal
        if shown and dumps is not None:
            counts = [query_count(d) for d in dumps]
            total = None if None in counts else sum(counts)
        shown = shown and (total is None or total > 1)
        if not shown:
            yield lambda k: None
            return
        columns = [TextColumn(label), BarColumn(), MofNCompleteColumn() if total is not None else
                   TextColumn("{task.completed} queries"), TimeElapsedColumn()]
        with Progress(*columns, console=console, transient=True) as bar:
            task = bar.add_task(label, total=total)
            yield lambda k: bar.update(task, completed=k)
