"""The policy of the store's views: where several sources describe one job, one account of it.

A 0.20 history log and Rumen's parse of it, a cut and a complete copy of one
``.jhist``, two runs under one job id: each gives rows of the same units
(:attr:`~phaseline.schemas.TableSpec.unit`).  :func:`create_account_views` ranks
the sources of each such job once, for all tables (``sql/overlapping_sources.sql``
says the order), and gives each table a view that keeps the preferred source's
rows of each unit (``sql/one_account_view.sql``); ``phaseline verify`` reports
what the ranking set aside from the temporary table ``overlapping_sources``.
The mechanism that this policy sits on (the ``raw`` views over Parquet) is
:mod:`phaseline.store.views`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from phaseline import schemas
from phaseline.store.sql import load, render

if TYPE_CHECKING:
    import duckdb

#: Two sources of one job id whose submit times differ by more than this describe two runs, not
#: one: a history and its copy, or Rumen's parse of it, carry the same submit time to the
#: millisecond; a job id comes back only when a cluster's id prefix does (LocalJobRunner's random
#: ``job_local<N>_0001``, a hand-edited or replayed trace).
SAME_RUN_SLACK_MS = 60_000


def create_account_views(con: duckdb.DuckDBPyConnection, shared: Sequence[str]) -> None:
    """The default schema's views over the ``raw`` ones: one account per unit of each job.

    ``shared``: the tables whose files hold rows of several sources (only those can overlap).
    """
    overlapping = find_overlaps(con, shared)
    for name in schemas.TABLES:
        con.execute(render("one_account_view" if name in overlapping else "plain_view", table=name))


def find_overlaps(con: duckdb.DuckDBPyConnection, tables: Sequence[str]) -> set[str]:
    """Fill the temporary table ``overlapping_sources`` (see :meth:`~phaseline.store.Store.connect`);
    the tables with any.

    ``sources.job_ids`` says which jobs two sources share without reading the data;
    only those jobs' rows are then counted.  Sources ingested before that column
    existed have it NULL, and the rows of every job are counted instead.
    """
    (unknown_sources,) = con.execute(load("sources_without_job_ids")).fetchone() or (0,)
    per_table = "_per_job_rows"
    if not unknown_sources:
        con.execute(load("_shared_jobs"))
        (shared_jobs,) = con.execute(load("_shared_job_count")).fetchone() or (0,)
        tables = tables if shared_jobs else ()
        per_table = "_per_job_rows_of_shared_jobs"
    con.execute(load("_per_job"))
    for name in tables:
        con.execute(render(per_table, table=name), {"table_name": name})
    con.execute(
        load("overlapping_sources"),
        {
            "derived_formats": sorted(schemas.DERIVED_FORMATS),
            "history_formats": sorted(schemas.HISTORY_FORMATS),
            "same_run_slack_ms": SAME_RUN_SLACK_MS,
        },
    )
    con.execute(load("_drop_steps"))
    return {r[0] for r in con.execute(load("overlapping_tables")).fetchall()}
