"""The ``ctxselect`` command line: the one Typer app, its error handling and entry point.

Exit codes: 0 success (and, for ``inspect``, every query passes the gate), 1 some query fails the
gate, 2 bad input or arguments — a bad option included — (a one-line message on stderr
``ctxselect: error: ...``, no traceback).

User strings reach the terminal as data (see :mod:`ctxselect.cli.terminal`). The commands live in
one module per group and register themselves on :data:`app` when :mod:`ctxselect.cli` imports
them: ``quality_cmd`` (inspect), ``select_cmd`` (select, compare), ``bench_cmd`` (bench) and
``data_cmd`` (gen, audit, ablate); :data:`COMMAND_ORDER` fixes their order in ``--help``.
"""

from __future__ import annotations

import math
import os
import signal
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Callable, Iterator, Sequence

import typer
from rich.console import Console
from typer.core import TyperGroup

from ctxselect.cli.output import Output
from ctxselect.cli.terminal import _error_line, columns_width, sane_terminal_environment, terminal_text
from ctxselect.errors import CtxSelectError, InputError
from ctxselect.model.files import is_stdout, output_target
from ctxselect.model.io import display_name
from ctxselect.model.parquet import is_parquet, require_pyarrow

__all__ = ["COMMAND_ORDER", "EXIT_BAD_INPUT", "EXIT_GATE_FAILED", "EXIT_OK", "app", "main", "terminal_text"]

EXIT_OK, EXIT_GATE_FAILED, EXIT_BAD_INPUT = 0, 1, 2
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as a process the signal ended: the output's reader left early

_CLICK_ERROR = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


#: The order of the commands in ``ctxselect --help``, whatever order their modules register them in
#: (a command not listed comes after these).
COMMAND_ORDER = ("inspect", "select", "bench", "compare", "gen", "audit", "ablate")


class _OneLineErrors(TyperGroup):
    """The command group, with every usage or option error as one line on stderr (exit 2)."""

    def list_commands(self, ctx: Any) -> list[str]:
        rank = {name: k for k, name in enumerate(COMMAND_ORDER)}
        return sorted(super().list_commands(ctx), key=lambda name: rank.get(name, len(rank)))

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True, **extra: Any) -> Any:
        try:
            code = super().main(args=args, prog_name=prog_name, complete_var=complete_var,
                                standalone_mode=False, **extra)
        except _CLICK_ERROR as err:
            if type(err).__name__ == "NoArgsIsHelpError":
                code = EXIT_BAD_INPUT  # the help was printed (no command given)
            else:
                ctx = getattr(err, "ctx", None)
                hint = ""
                if ctx is not None:
                    command = "ctxselect" + (f" {ctx.info_name}" if ctx.parent is not None else "")
                    hint = f" (see '{command} --help')"
                typer.echo(_error_line(err.format_message()) + hint, err=True)
                code = err.exit_code
        except typer.Abort:
            typer.echo(_error_line("aborted"), err=True)
            code = EXIT_GATE_FAILED
        if not standalone_mode:
            return code
        sys.exit(code if isinstance(code, int) else EXIT_OK)


app = typer.Typer(
    name="ctxselect",
    cls=_OneLineErrors,
    help="Choose and inspect the retrieved chunks that go into an LLM's context window.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _show_version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("ctxselect")
        except PackageNotFoundError:  # run from a source tree that was never installed
            found = "unknown (not installed)"
        typer.echo(f"ctxselect {found}")
        raise typer.Exit()


@app.callback()
def _root(version: Annotated[bool, typer.Option("--version", callback=_show_version, is_eager=True,
                                                help="Print the version and exit.")] = False) -> None:
    """Choose and inspect the retrieved chunks that go into an LLM's context window."""


DumpPath = Annotated[Path, typer.Argument(help="A candidate dump: JSONL (one query per line), Parquet "
                                               "(*.parquet), or - for standard input.", show_default=False)]
JsonFlag = Annotated[bool, typer.Option("--json", help="Print JSON for machines instead of tables.")]
#: The options that set each query's requirements (``select`` and ``inspect``; precedence in
#: :mod:`ctxselect.model.overrides`).
RequirementsFile = Annotated[Path | None, typer.Option(
    "--requirements", show_default=False,
    help="A TOML or JSON file of requirements that replaces each query's (a query keeps its own budget "
         "when the file names none).")]
BudgetOption = Annotated[int | None, typer.Option(
    "--budget", min=1, show_default=False, help="The token budget of every query (over the dump and --requirements).")]



def _finite(low: float | None = None, high: float | None = None) -> dict[str, Any]:
    """The ``callback`` and ``metavar`` of a float option: a finite number in [low, high] (either
    bound optional), checked before any work: ``typer.Option(**_finite(0, 1), help=...)``.

    The range is checked here, not with typer's ``min``/``max``: typer checks those first, so NaN
    (which compares false) and -inf or inf were "should be >= 0" or "<= 1" where a finite number is
    what is expected."""
    if low is not None and high is not None:
        expected, shown = f"a finite number in [{low:g}, {high:g}]", f"{low:g}<=x<={high:g}"
    elif low is not None:
        expected, shown = f"a finite number >= {low:g}", f"x>={low:g}"
    else:
        expected, shown = "a finite number", "finite"

    def check(value: float | None) -> float | None:
        if value is not None and not (math.isfinite(value) and (low is None or value >= low)
                                      and (high is None or value <= high)):
            raise typer.BadParameter(f"expected {expected}, found {value}")
        return value

    return {"callback": check, "metavar": f"<float> [{shown}]"}


def _console(stderr: bool = False) -> Console:
    """A console as wide as the terminal, or when the output is not a terminal as wide as
    ``COLUMNS`` says (200 when unset); emoji codes (``:smile:``) are never replaced."""
    console = Console(stderr=stderr, emoji=False)
    if console.is_terminal:
        return console
    return Console(stderr=stderr, width=columns_width() or 200, emoji=False)


def _guarded(work: Callable[[], int]) -> None:
    """Run a command body: library errors become one line on stderr and exit code 2."""
    sane_terminal_environment()
    try:
        code = work()
    except CtxSelectError as err:
        typer.echo(_error_line(err), err=True)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    except BrokenPipeError:  # the reader of standard output left (`ctxselect gen - | head`): no error
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())  # Python's last flush at exit then goes nowhere
        except (OSError, ValueError, AttributeError):
            pass
        raise typer.Exit(EXIT_BROKEN_PIPE) from None
    except OSError as err:
        message = f"{err.filename}: {err.strerror}" if err.filename and err.strerror else err
        typer.echo(_error_line(message), err=True)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    raise typer.Exit(code)


def _run(work: Callable[[Output], int], quiet: bool = False, verbose: int = 0) -> None:
    """:func:`_guarded` with the command's :class:`~ctxselect.cli.output.Output` (``--quiet``,
    ``--verbose``): status lines, progress bars and the log handler, removed when the command ends."""
    def body() -> int:
        with Output(quiet, verbose) as output:
            return work(output)

    _guarded(body)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return os.path.realpath(a) == os.path.realpath(b)


def _check_output(out: Path | None, inputs: Sequence[Path], option: str) -> None:
    """Refuse, before any work, an output that is not a regular file or is one of the inputs, and a
    Parquet output without pyarrow; ``-`` (standard output) is always accepted."""
    if out is None or is_stdout(out):
        return
    output_target(out)
    if is_parquet(out):
        require_pyarrow(str(out))
    for source in inputs:
        if _same_file(out, source):
            raise InputError(file=str(out), field=option, message="this is an input file; writing it would "
                             "destroy the input", expected="another path")


@contextmanager
def about(dump: Path, query: Any) -> Iterator[None]:
    """An :class:`InputError` raised while a command works on ``query`` of ``dump`` names both (a
    check that needs the query's requirements, such as a source rule, runs after the dump's reading)."""
    try:
        yield
    except InputError as err:
        raise err.located(file=display_name(dump), query_id=query.query_id) from None


def _terminate(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)  # unwinds: temporary files are removed


def main() -> None:
    """Console-script entry point.

    Output that the terminal's encoding cannot show is written as backslash escapes (never a
    UnicodeEncodeError), and SIGTERM exits through Python's cleanup (a partly written output file
    is removed).
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError, OSError):
            pass
    try:
        signal.signal(signal.SIGTERM, _terminate)
    except (ValueError, OSError):  # pragma: no cover - not the main thread
        pass
    app()
