"""The ``ctxselect`` command line: thin commands over the library (see :mod:`ctxselect.cli.core`)."""

from ctxselect.cli.core import app, main

__all__ = ["app", "main"]
