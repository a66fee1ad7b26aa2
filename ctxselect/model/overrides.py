"""Requirements given beside a dump: a requirements file (TOML or JSON) and a budget.

Precedence, for every query of the dump (what ``select`` and ``inspect`` apply with
``--requirements FILE`` and ``--budget N``):

1. ``budget`` (``--budget N``) is the token budget, whatever the file or the dump say;
2. a requirements file *replaces* each query's requirements whole (its gate, sources, scopes ...);
   when the file names no budget, each query keeps its own;
3. otherwise the dump's requirements apply.

So ``--budget`` alone changes only the budget, and a file is read as a complete policy, never
merged key by key with the dump's (a merge would mix two policies, and a dump's ``budget`` alias or
a flat gate key would collide with the file's).

A requirements file holds one requirements object (the keys of docs/dump-format.md), at the top
level or under a ``requirements`` key: ``.toml`` (read with :mod:`tomllib`, or ``tomli`` on Python
3.10) or ``.json`` (read as strictly as a dump line). Every problem is an InputError naming the file.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from typing import Any, Mapping

from ctxselect.errors import InputError, plain_reason
from ctxselect.model.files import read_small_file
from ctxselect.model.io import Query, parse_json_text
from ctxselect.model.requirements import Requirements

__all__ = ["RequirementOverrides", "read_requirements_file"]

_BUDGET_KEYS = ("token_budget", "budget")
#: The largest requirements file read (a policy is a few kB; a device or a mistaken path is refused, not read whole).
MAX_REQUIREMENTS_BYTES = 16 * 1024 * 1024


def _toml_loads(text: str) -> Any:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ValueError(f"malformed TOML ({' '.join(str(err).split())})") from None
    except RecursionError:  # tomllib reads nested arrays and inline tables recursively
        raise ValueError("TOML nested too deeply") from None
    except ValueError as err:  # an integer too long for Python to read
        raise ValueError(f"malformed TOML ({plain_reason(err)})") from None


def read_requirements_file(path: str | os.PathLike) -> dict[str, Any]:
    """The requirements object of a ``.toml`` or ``.json`` file (validated by the caller).

    Raises
    ------
    InputError
        Naming the file: another extension, a file that cannot be read, bytes that are not UTF-8
        text, malformed TOML or JSON (with its line), or a value that is not an object; a path that is
        not a regular file (a device, a FIFO, a folder) or larger than :data:`MAX_REQUIREMENTS_BYTES`
        (:func:`ctxselect.model.files.read_small_file`).
    """
    name = str(path)
    kind = os.path.splitext(name)[1].lower()
    if kind not in (".toml", ".json"):
        raise InputError(file=name, field="--requirements", message="unknown kind of requirements file",
                         expected="a .toml or .json file")
    text = read_small_file(path, limit=MAX_REQUIREMENTS_BYTES, what="requirements file", option="--requirements",
                           expected="a .toml or .json file")
    try:
        data = _toml_loads(text) if kind == ".toml" else parse_json_text(text)
    except ValueError as err:
        raise InputError(file=name, message=str(err)) from None
    if isinstance(data, Mapping) and set(data) == {"requirements"}:
        data = data["requirements"]
    if not isinstance(data, Mapping):
        raise InputError(file=name, expected="an object of requirements", found=data, has_found=True)
    return dict(data)


@dataclasses.dataclass(frozen=True)
class RequirementOverrides:
    """A requirements file and a budget, checked once and applied to each query (see the module
    docstring for the precedence).

    Attributes
    ----------
    requirements : Requirements or None
        The file's requirements (with the budget ``budget``, the file's, or a placeholder 1).
    budget : int or None
    file_has_budget : bool
    """

    requirements: Requirements | None = None
    budget: int | None = None
    file_has_budget: bool = False

    @classmethod
    def load(cls, path: str | os.PathLike | None = None, budget: int | None = None) -> "RequirementOverrides":
        """Read and check the file (every error names it) before any query is read."""
        if path is None:
            return cls(None, budget, False)
        data = read_requirements_file(path)
        has_budget = any(key in data for key in _BUDGET_KEYS)
        if budget is not None or not has_budget:
            data = {k: v for k, v in data.items() if k not in _BUDGET_KEYS}
            data["token_budget"] = budget if budget is not None else 1
        try:
            requirements = Requirements.from_dict(data)
        except InputError as err:
            raise err.located(file=str(path)) from None
        return cls(requirements, budget, has_budget)

    @property
    def active(self) -> bool:
        return self.requirements is not None or self.budget is not None

    def apply(self, query: Query) -> Query:
        """``query`` with these requirements (itself when there is nothing to override)."""
        if not self.active:
            return query
        if self.requirements is None:
            requirements = dataclasses.replace(query.requirements, token_budget=self.budget)
        elif self.budget is None and not self.file_has_budget:
            requirements = dataclasses.replace(self.requirements, token_budget=query.requirements.token_budget)
        else:
            requirements = self.requirements
        return dataclasses.replace(query, requirements=requirements)
