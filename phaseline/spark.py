"""A Spark session for phaseline's Spark engine (``--engine spark``): one home for how it is built.

Both Spark paths share it: :mod:`ingest.spark_ingest` (the readers as Spark tasks) and
:mod:`phaseline.spark_views` (the store's tables as Spark SQL views, for
``phaseline query --engine spark`` and :mod:`profiles.spark_sql`).

The Python that runs phaseline also runs its Spark tasks (``spark.pyspark.python``),
and the directories this process imports ``phaseline``, ``ingest`` and ``profiles`` from
are put on the tasks' ``PYTHONPATH``: a local master (``local[N]``) or a cluster whose
nodes see the same paths (phaseline installed in the same place, the store on a
shared filesystem) needs nothing else.  pyspark is the ``engine`` extra, imported here
only when a session is asked for.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from phaseline.errors import EngineError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: The master of ``--engine spark`` when none is given: two local task slots, the machine's cores.
DEFAULT_MASTER = "local[2]"
APP_NAME = "phaseline"
#: Partitions of a Spark SQL shuffle: Spark's 200 is for clusters; a profile query's data is a job's.
SHUFFLE_PARTITIONS = 8


def _code_roots() -> list[str]:
    """The directories phaseline's top-level packages are imported from (for the tasks' ``PYTHONPATH``)."""
    import ingest
    import phaseline
    import profiles

    roots = {str(Path(m.__file__ or "").resolve().parent.parent) for m in (phaseline, ingest, profiles)}
    return sorted(roots)


@contextmanager
def spark_session(master: str = DEFAULT_MASTER, *, app_name: str = APP_NAME) -> Iterator[SparkSession]:
    """A Spark session on ``master``, stopped on exit; a session already active in this process on
    the same master (a caller's, a notebook's) is used as it is and left running.

    Timestamps are read and shown in UTC (the store's ``_ms`` columns are integers; a
    query that turns them into timestamps gets the same text as DuckDB's), ANSI mode
    is off (a failed cast is NULL, as ``TRY_CAST`` in DuckDB; the profiles' SQL
    assumes integer division by ``//`` and never by ``/``), and the web UI is off.

    Raises
    ------
    EngineError
        pyspark is not installed, or the JVM does not start.
    """
    try:
        from pyspark.sql import SparkSession
    except ImportError as exc:  # the `engine` extra
        raise EngineError("--engine spark needs pyspark: pip install 'phaseline[engine]'") from exc
    active = SparkSession.getActiveSession()
    if active is not None and active.sparkContext.master == master:  # (one context a JVM: not ours to stop)
        yield active
        return
    with ExitStack() as stack:
        yield _start(SparkSession, master, app_name, stack)


def _start(session_class: type[SparkSession], master: str, app_name: str, stack: ExitStack) -> SparkSession:
    """A session whose stop (and the removal of its warehouse directory) is on ``stack``."""
    warehouse = stack.enter_context(tempfile.TemporaryDirectory(prefix="phaseline-spark-"))
    python_path = os.pathsep.join([*_code_roots(), *filter(None, [os.environ.get("PYTHONPATH")])])
    builder = (
        session_class.builder.master(master)
        .appName(app_name)
        .config("spark.pyspark.python", sys.executable)
        .config("spark.pyspark.driver.python", sys.executable)
        .config("spark.executorEnv.PYTHONPATH", python_path)
        .config("spark.ui.enabled", "false")
        .config(
            "spark.sql.warehouse.dir", warehouse
        )  # (Spark makes it on start: not in the working directory)
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.ansi.enabled", "false")
        .config("spark.sql.shuffle.partitions", str(SHUFFLE_PARTITIONS))
        # chunks submitted from several driver threads share the slots
        .config("spark.scheduler.mode", "FAIR")
    )
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # local workers start from the driver's env
    try:
        session = builder.getOrCreate()
    except Exception as exc:  # py4j / JVM start-up: the message is Spark's
        raise EngineError(f"Spark did not start on master {master!r}: {exc}") from exc
    stack.callback(session.stop)
    session.sparkContext.setLogLevel("ERROR")
    return session
