"""The example dumps that ship inside the package, for a user who installed it with pip (the
repository's ``examples/`` folder is not installed): ``ctxselect gen --example support_desk OUT``
writes one, and :func:`example_path` finds its file."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from ctxselect.errors import InputError

__all__ = ["EXAMPLES", "example_path"]

#: The bundled examples (``ctxselect/evaluate/data/NAME.jsonl``; the repository's
#: ``examples/NAME.jsonl`` is the same file, a test checks).
EXAMPLES = ("demo", "support_desk")


def example_path(name: str = "support_desk") -> Path:
    """The file of a bundled example dump.

    Raises
    ------
    InputError
        For a name that is not in :data:`EXAMPLES`.
    """
    if name not in EXAMPLES:
        raise InputError(field="--example", message=f"no example {name!r}", expected="one of " + ", ".join(EXAMPLES))
    return Path(str(resources.files("ctxselect.evaluate") / "data" / f"{name}.jsonl"))
