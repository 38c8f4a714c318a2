"""The engine and cluster shape a platform model was measured on, against the cluster predicted for.

A platform model records what its microbenchmarks ran on in ``cluster["engine"]`` (``phaseline
fit`` reads it from the store: LocalJobRunner, or YARN with its NodeManagers and containers); its
phase costs hold for that engine and shape.  Every model's prediction is framed by
:func:`warn_if_other_cluster` (:class:`predict.core._Framed`), which says so in one line when the
cluster predicted for is another.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from phaseline.errors import PlatformMismatchWarning
from phaseline.hadoop_names import LOCAL_ENGINE, YARN_ENGINE

if TYPE_CHECKING:
    from predict.core import Cluster, PhaseDurationModel

__all__ = ["measured_on", "task_cores", "warn_if_other_cluster"]


def _measured_fits(measured: Mapping[str, Any], cluster: Cluster) -> bool:
    """Whether ``cluster`` is of the engine and shape of one ``engine`` record of a platform model."""
    name = measured.get("name")
    if cluster.engine is not None and cluster.engine != name:
        return False
    if name == LOCAL_ENGINE:  # LocalJobRunner: one node, its parallelism as slots
        return cluster.nodes == 1
    if name == YARN_ENGINE:
        shape = (
            (measured.get("nodes"), cluster.nodes),
            (measured.get("containers_per_node"), cluster.map_slots_per_node),
        )
        return all(want is None or want == got for want, got in shape) or _is_its_loopback(measured, cluster)
    return True  # an engine the store gives no shape of


def _is_its_loopback(measured: Mapping[str, Any], cluster: Cluster) -> bool:
    """Whether ``cluster`` is a measured mini YARN cluster as its jobs are predicted: one host, the
    containers its ApplicationMaster leaves (:func:`predict.backtest_suite.loopback_cluster`)."""
    from platform_model.engine.yarn import AM_CONTAINERS

    nodes, per = measured.get("nodes"), measured.get("containers_per_node")
    if not isinstance(nodes, int) or not isinstance(per, int) or cluster.nodes != 1:
        return False
    return cluster.map_slots == cluster.reduce_slots == nodes * per - AM_CONTAINERS


def _describe_engine(measured: Mapping[str, Any]) -> str:
    name = measured.get("name")
    if name == "mixed":
        return "several: " + "; ".join(_describe_engine(m) for m in measured.get("engines", []))
    if name == LOCAL_ENGINE:
        return f"LocalJobRunner ({LOCAL_ENGINE}, one node)"
    if name == YARN_ENGINE:
        nodes, per, mb = (measured.get(k) for k in ("nodes", "containers_per_node", "container_mb"))
        return (f"YARN, {nodes if nodes is not None else '?'} node(s) x {per if per is not None else '?'} "
                f"container(s) of {mb if mb is not None else '?'} MiB")  # fmt: skip
    return str(name)


def _measured_record(platform: PhaseDurationModel) -> Mapping[str, Any] | None:
    """The platform model's record of what it was measured on (``None``: it keeps none)."""
    measured = (getattr(platform, "cluster", None) or {}).get("engine")
    return measured if isinstance(measured, Mapping) and measured.get("name") else None


def _fits_record(measured: Mapping[str, Any], cluster: Cluster) -> bool:
    candidates = measured.get("engines", []) if measured.get("name") == "mixed" else [measured]
    return any(_measured_fits(m, cluster) for m in candidates)


def measured_on(platform: PhaseDurationModel, cluster: Cluster) -> bool:
    """Whether ``platform`` says it was measured on the engine and shape of ``cluster`` (``False`` where
    it keeps no record: an older model, a test double).

    Where it was, what the cluster's own runs measured (a profile's fixed latencies) holds for the
    prediction as it stands (:func:`predict.shuffle_estimate.first_shuffle`).
    """
    measured = _measured_record(platform)
    return measured is not None and _fits_record(measured, cluster)


def warn_if_other_cluster(platform: PhaseDurationModel, cluster: Cluster, *, stacklevel: int = 3) -> None:
    """Warn (:class:`~phaseline.errors.PlatformMismatchWarning`, one line) when ``cluster`` is of another
    engine or shape than ``platform`` was measured on.

    A platform model records what it was measured on in ``cluster["engine"]`` (``phaseline fit``
    reads it from the store); a model without that record (an older one, a test double) is not
    judged.  Its phase costs hold for the engine and container shape they were measured on: a
    LocalJobRunner JVM's warm tasks, or a YARN cluster's fresh container JVMs sharing its nodes.
    ``stacklevel`` points the warning at the caller's caller (3) or further out.
    """
    measured = _measured_record(platform)
    if measured is None or _fits_record(measured, cluster):
        return
    engine = f"{cluster.engine}, " if cluster.engine else ""
    target = f"{engine}{cluster.nodes} node(s) x {cluster.map_slots_per_node} map slot(s)"
    warnings.warn(
        PlatformMismatchWarning(
            f"the platform model was measured on {_describe_engine(measured)}, not on the cluster predicted for "
            f"({target}): its phase costs are carried over as measured"
        ),
        stacklevel=stacklevel,
    )


def task_cores(platform: PhaseDurationModel, cluster: Cluster) -> tuple[Cluster, str | None]:
    """``cluster`` with the cores a node's tasks got on the platform model's own runs
    (:mod:`platform_model.task_cores`), where the platform was measured on it and they are fewer than the
    CPUs given, and the line that says so; else ``cluster`` as it is and ``None``."""
    from platform_model.task_cores import TASK_CORES  # (here: the platform stage's modules load on use)

    measured = (getattr(platform, "cluster", None) or {}).get(TASK_CORES) or {}
    cores, cpus = measured.get("cores"), cluster.cpus_per_node
    if not isinstance(cores, int) or cpus is None or cores >= cpus or not measured_on(platform, cluster):
        return cluster, None
    said = (
        f"the replay shares {cores} core(s) a node among its maps, not the {cpus} given: what the platform's "
        f"{measured.get('runs')} benchmark runs on this cluster measured its tasks to get (their maps' durations "
        "against their concurrency)"
    )
    return dataclasses.replace(cluster, cpus_per_node=cores), said
