"""``--by``: the group of a query in a dump field, for the bench's breakdowns (issue 16.2)."""

from __future__ import annotations

import json
from typing import Any

from ctxselect.errors import InputError
from ctxselect.model.io import Query

__all__ = ["MISSING", "group_value"]


#: The group of a query that lacks the --by field.
MISSING = "(missing)"


#: Fields of a dump line that hold chunks or id lists, never a group: --by refuses them (a group's
#: name is printed, and a chunk of a scope the query does not admit must never be).
_NOT_GROUPS = ("candidates", "gold", "selected", "paraphrases")


def group_value(query: Query, path: str) -> str:
    """The value of the dump field ``path`` of a query, as text, for ``--by``: ``query_id``,
    ``query``, ``requirements.KEY``, a key the line carries besides the known ones, or a dotted
    path into one (``meta.question_type``, ``meta.hops``); :data:`MISSING` when the query has none.

    Raises
    ------
    InputError
        When the field holds a list or an object (a group is one string, number or boolean), or
        names chunks (``candidates``, ``gold``, ``selected``, ``paraphrases``).
    """
    head, _, rest = path.partition(".")
    if head in _NOT_GROUPS:
        raise InputError(field="--by", message=f"{head!r} holds chunks or ids, not a group",
                         expected="a field holding a string, number or boolean (e.g. meta.question_type)")
    known = {"query_id": query.query_id, "query": query.query, "requirements": query.requirements.to_dict()}
    value: Any = known.get(head, query.extra.get(head, MISSING))
    for key in rest.split(".") if rest else []:
        value = value.get(key, MISSING) if isinstance(value, dict) else MISSING
    if value is MISSING or value is None:
        return MISSING
    if isinstance(value, (dict, list)):
        raise InputError(query_id=query.query_id, field="--by", message=f"{path!r} holds "
                         f"{'an object' if isinstance(value, dict) else 'a list'}, not a group",
                         expected="a field holding a string, number or boolean")
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
