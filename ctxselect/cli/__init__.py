"""The ``ctxselect`` command line: thin commands over the library.

:mod:`ctxselect.cli.core` defines the one Typer app, its error handling and :func:`main`; each
command module registers its commands on that app when it is imported here (in any order:
``core.COMMAND_ORDER`` fixes the order of ``ctxselect --help``).
"""

from ctxselect.cli import bench_cmd, data_cmd, quality_cmd, select_cmd  # noqa: F401  register the commands
from ctxselect.cli.core import app, main

__all__ = ["app", "main"]
