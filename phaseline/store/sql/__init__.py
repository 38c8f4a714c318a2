"""The store's DuckDB SQL, one concept per ``.sql`` file, loaded with :mod:`importlib.resources`.

Values are bound parameters (``$name``).  DuckDB binds no identifier, and no
parameter at all in a view's definition, so a statement run for each table
names it with a placeholder: ``{{table}}`` (the quoted identifier),
``{{table_name}}`` (the name as a string literal, for a view's definition) and
``{{unit}}`` (the table's unit columns, ``r."job_id", ...``).  :func:`render`
fills them only from the declared schemas (:data:`phaseline.schemas.TABLES`):
a name that is not a declared table, or a column not in its schema, is
refused, so nothing read from a store or a user reaches the SQL text.

>>> print(render("plain_view", table="jobs"))
CREATE VIEW main."jobs" AS SELECT * FROM raw."jobs"
>>> render("plain_view", table="jobs; DROP TABLE x")
Traceback (most recent call last):
...
ValueError: 'jobs; DROP TABLE x' is not a declared table
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

from phaseline import schemas

_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


@cache
def load(name: str) -> str:
    """The text of ``<name>.sql`` in this package, its comment lines dropped and stripped."""
    text = resources.files(__name__).joinpath(f"{name}.sql").read_text(encoding="utf-8")
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--")).strip()


def render(name: str, *, table: str) -> str:
    """``<name>.sql`` with the placeholders of declared table ``table`` filled (see the module)."""
    if table not in schemas.TABLES:
        raise ValueError(f"{table!r} is not a declared table")
    spec = schemas.TABLES[table]
    declared = set(spec.schema.names)
    if not set(spec.unit) <= declared:  # (a declaration's own mistake, caught before it reaches SQL)
        raise ValueError(f"{table}: unit {spec.unit} names columns the schema does not declare")
    values = {
        "table": _identifier(table),
        "table_name": f"'{table}'",
        "unit": ", ".join(f"r.{_identifier(c)}" for c in spec.unit),
    }

    def fill(match: re.Match[str]) -> str:
        return values[match.group(1)]  # KeyError: a placeholder this module does not fill

    return _PLACEHOLDER.sub(fill, load(name))


def _identifier(name: str) -> str:
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", name):
        raise ValueError(f"{name!r} is not a plain identifier")
    return f'"{name}"'


__all__ = ["load", "render"]
