"""Rendering rows for the terminal: table, csv, json, and the options every command shares.

``--format json`` always prints ONE JSON array of objects (column -> value),
so scripts can rely on it.
"""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import functools
import io
import json
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from phaseline.errors import (
    ExtrapolationWarning,
    NotFoundError,
    PhaselineError,
    PhaselineWarning,
    Said,
    StoreError,
    first_line,
    recording_warnings,
)
from phaseline.store import PartitionFilter, Store, default_store_path, is_partitioned, partition_filter

F = TypeVar("F", bound=Callable[..., Any])

FORMATS = ("table", "csv", "json")


def store_option(func: F) -> F:
    """``--store DIR`` (env ``PHASELINE_STORE``, default ``./phaseline-store``)."""
    return click.option(
        "--store",
        "store_dir",
        type=click.Path(file_okay=False, path_type=Path),
        envvar="PHASELINE_STORE",
        default=None,
        show_envvar=True,
        help=f"Store directory [default: ./{default_store_path().name}].",
    )(func)


class _KeyValue(click.ParamType[tuple[str, str]]):
    """``KEY=VALUE`` (``day=2026-11-28``) as ``(key, value)``."""

    name = "KEY=VALUE"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> tuple[str, str]:
        if isinstance(value, tuple):
            return value
        key, sep, val = str(value).partition("=")
        if not sep or not key.strip() or not val.strip():
            self.fail(f"{value!r} is not KEY=VALUE (e.g. day=2026-11-28)", param, ctx)
        return key.strip(), val.strip()


def partition_option(func: F) -> F:
    """``--partition KEY=VALUE`` (repeatable): the partitions of a partitioned --store to read, as
    ``where`` for :func:`open_store` (keys ANDed, one key's values ORed; ``{}`` for all)."""
    return click.option(
        "--partition",
        "where",
        type=_KeyValue(),
        multiple=True,
        callback=lambda ctx, param, pairs: partition_filter(pairs),
        help="Read only these partitions of a partitioned --store (ingest --partition-by), the others "
        "unopened: day=2026-11-28, cluster=<ts>; repeat it (keys ANDed, a key's values ORed).",
    )(func)


def read_store_option(func: F) -> F:
    """``--store DIR`` and ``--partition KEY=VALUE``: the options of a command that reads a store."""
    return store_option(partition_option(func))


def format_option(func: F) -> F:
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(FORMATS),
        default="table",
        show_default=True,
        help="Output format; json is one array of objects.",
    )(func)


def job_table_command(name: str, *, partition: bool = True) -> Callable[[Callable[..., None]], click.Command]:
    """A command that shows a table about one job of the store:
    ``NAME JOB_ID [--store DIR] [--partition KEY=VALUE] [--format F]``.

    The function it decorates takes ``(job_id, store_dir, where, fmt)``, or without ``partition``
    (a command that may write into the store) ``(job_id, store_dir, fmt)``; its docstring is the
    command's help.
    """
    stores = read_store_option if partition else store_option

    def decorate(func: Callable[..., None]) -> click.Command:
        return click.command(name)(click.argument("job_id")(stores(format_option(handle_errors(func)))))

    return decorate


class _Size(click.ParamType[int]):
    """A byte size option: ``50G``, ``512M``, ``1e9`` (:func:`predict.units.parse_size`); ``positive``:
    0 is refused too (a usage error, exit status 2, like any other bad option value)."""

    name = "SIZE"

    def __init__(self, *, positive: bool = False) -> None:
        self.positive = positive

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        from predict.units import parse_size

        try:
            size = parse_size(value)
        except PhaselineError as exc:
            self.fail(str(exc), param, ctx)
        if self.positive and size <= 0:
            self.fail(f"size {value!r} must be more than 0 bytes", param, ctx)
        return size


SIZE = _Size()
POSITIVE_SIZE = _Size(positive=True)


class _PositiveNumber(click.FloatRange):
    """A finite number > 0, or >= ``least`` (``FloatRange`` alone lets ``nan`` and ``inf`` through)."""

    name = "positive number"

    def __init__(self, least: float | None = None, most: float | None = None) -> None:
        if least is None:
            super().__init__(min=0.0, max=most, min_open=True)
        else:
            super().__init__(min=least, max=most)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


POSITIVE_NUMBER = _PositiveNumber()


def number_at_least(least: float, most: float | None = None) -> _PositiveNumber:
    """A finite number >= ``least`` (and <= ``most``, if given; a usage error otherwise)."""
    return _PositiveNumber(least, most)


def only_with(param: str, condition: str, holds: bool) -> None:
    """A usage error when option ``param`` was given on the command line where it has no effect
    (``holds`` false: the option it qualifies, ``condition``, is not in force)."""
    ctx = click.get_current_context()
    if not holds and ctx.get_parameter_source(param) is click.core.ParameterSource.COMMANDLINE:
        option = next(o for o in ctx.command.params if o.name == param)
        raise click.UsageError(f"{option.opts[0]} only applies {condition}; it would be ignored here")


def open_store(store_dir: Path | None, *, create: bool = False, where: PartitionFilter | None = None) -> Store:
    """The store at ``--store`` (or its default); one that does not exist is an error unless a
    command that writes (``create``) makes it: a mistyped path must not read as an empty store.

    A partitioned store's root (``day=.../`` stores under it) is read as one store
    (:meth:`Store.connect`), or only the partitions ``where`` (``--partition``) chooses;
    written into only by ``ingest --partition-by``.  ``where`` on a store of its own, or
    naming a key or value its partitions do not have, is an error here, before any read.
    """
    store = Store(store_dir if store_dir is not None else default_store_path(), where=where)
    if where:
        store.partitions()  # the StoreError that says why it cannot choose them, if it cannot
        return store
    if is_partitioned(store.root):
        if create:
            raise StoreError(
                f"{store.root} holds a partitioned store (key=value directories of stores): "
                "write into it with `phaseline ingest --partition-by`, or give another --store"
            )
        return store
    if not create and not store.exists():
        what = "holds no phaseline store (no MANIFEST.json)" if store.root.is_dir() else "does not exist"
        raise NotFoundError(
            f"no store at {store.root}: it {what}; ingest into it first, or check --store / PHASELINE_STORE"
        )
    return store


def handle_errors(func: F) -> F:
    """Turn phaseline's errors, a path that cannot be opened, and a DuckDB error (a store
    file damaged since it was written) into clean CLI errors (no traceback), and
    phaseline's warnings into ``warning: ...`` lines on stderr (each message once, in
    order; the command goes on).

    A warning (an extrapolating platform model, a fit or a queuing model that did not
    converge, a sniffer that failed) qualifies a result, it does not stop it: a script
    gets the result on stdout and the reasons to doubt it on stderr.  Warnings of other
    libraries keep Python's own handling.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        said = Said()
        try:
            with recording_warnings() as said:
                return func(*args, **kwargs)
        except PhaselineError as exc:
            raise click.ClickException(str(exc)) from exc
        except BrokenPipeError:
            raise  # stdout closed early (`| head`): click's own handling
        except OSError as exc:
            if exc.errno is None:
                raise
            # the system refused a path the user gave or its device: an --out in a directory that
            # does not exist, a name too long, a full or read-only disk... no traceback
            where = f": {exc.filename}" if exc.filename is not None else ""
            raise click.ClickException(f"{exc.strerror or exc}{where}") from exc
        except Exception as exc:
            duckdb = sys.modules.get("duckdb")  # not imported here: most commands never load it
            if duckdb is not None and isinstance(exc, duckdb.Error):
                # e.g. a data file damaged since the ingest: DuckDB names it
                raise click.ClickException(f"query failed: {first_line(exc)}; see `phaseline verify`") from exc
            raise
        finally:
            _report_warnings(said)  # once the command is done (other libraries' warnings showed as they came)

    return wrapper  # type: ignore[return-value]


def _submodel_size(message: Warning | str) -> tuple[tuple[str, float, float], float | None] | None:
    """``((phase, low, high), data_bytes)`` of a platform submodel's extrapolation warning; None for any other."""
    if isinstance(message, ExtrapolationWarning) and message.phase is not None and message.fitted is not None:
        return (message.phase, *message.fitted), message.data_bytes
    return None


def _report_warnings(said: Sequence[PhaselineWarning]) -> None:
    """Each phaseline warning once, in order; a platform submodel's extrapolations one line per
    phase and fitted range, where the first of them came (a prediction of many tasks asks one
    submodel at many sizes near each other)."""
    sizes: dict[tuple[str, float, float], set[int]] = {}
    for w in said:
        submodel = _submodel_size(w)
        if submodel is not None and submodel[1] is not None:
            sizes.setdefault(submodel[0], set()).add(round(submodel[1]))
    seen: set[str] = set()
    for w in said:
        text = str(w)
        submodel = _submodel_size(w)
        got = sorted(sizes.get(submodel[0], ())) if submodel is not None else []
        if submodel is not None and len(got) > 1:
            phase, low, high = submodel[0]
            text = (f"phase {phase!r}: {len(got)} sizes from {got[0]} to {got[-1]} bytes are outside the fitted "
                    f"range [{low:.0f}, {high:.0f}] bytes; the prediction extrapolates")  # fmt: skip
        if text not in seen:
            seen.add(text)
            click.echo(f"warning: {text}", err=True)


def warn_if_no_files(found: int, paths: Sequence[str]) -> None:
    """Say so on stderr when ``paths`` held no file at all (an empty directory, a typo'd subdirectory)."""
    if found == 0:
        click.echo(f"warning: no files under {', '.join(paths)}: nothing was ingested", err=True)


def _jsonable(value: Any) -> Any:
    """A value as strict JSON takes it: NaN and infinities become null, at any depth (lists, structs)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return value.item()
    return value


def _cell(value: Any) -> str:
    """A table or CSV cell: a missing value (None, NaN, pandas' NA) is empty, never "None"; a
    list or struct is compact JSON (``[1.0, null]``), as ``--format json`` writes it."""
    value = _jsonable(value)
    if isinstance(value, list | dict):
        return json.dumps(value, default=str, allow_nan=False, ensure_ascii=False)
    return "" if value is None or type(value).__name__ == "NAType" else str(value)


def to_json(rows: Sequence[dict[str, Any]]) -> str:
    return json.dumps(
        [{k: _jsonable(v) for k, v in r.items()} for r in rows], indent=1, default=str, allow_nan=False
    )


def emit(rows: Sequence[dict[str, Any]], fmt: str, *, columns: Sequence[str] | None = None, title: str | None = None) -> None:
    """Print rows in the chosen format."""
    cols = list(columns) if columns is not None else (list(rows[0].keys()) if rows else [])
    if fmt == "json":
        click.echo(to_json(rows))
    elif fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(cols)
        for r in rows:
            writer.writerow([_cell(r.get(c)) for c in cols])
        click.echo(buf.getvalue(), nl=False)
    else:
        from rich.console import Console
        from rich.table import Table
        from rich.text import Text

        # values from traces are printed as they are: Text, never rich markup ("[red]" in a job name)
        table = Table(title=None if title is None else Text(title), show_lines=False)
        for c in cols:
            table.add_column(Text(str(c)), overflow="fold")
        for r in rows:
            table.add_row(*(Text(_cell(r.get(c))) for c in cols))
        console = Console(soft_wrap=False)
        if not console.is_terminal:
            # Piped or redirected: rich would assume 80 columns and fold headers and values;
            # the table gets the width it needs instead (a terminal keeps its own width).
            natural = console.measure(table, options=console.options.update(max_width=1 << 16)).maximum
            console = Console(soft_wrap=False, width=max(80, natural))
        console.print(table)
