"""The longest ``S -> E`` path of a task graph (Desai et al. 2012, section 3.5), and its record.

:func:`critical_path` walks the graph as networkx's ``dag_longest_path`` does (:func:`_dag_longest_path`);
:mod:`predict.critical_path` builds the job's graph, or reads the same path off its slot chains.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import networkx as nx

from phaseline.errors import PredictionError
from predict.map_pipeline import END, START

__all__ = ["CriticalPath", "critical_path"]


@dataclass(frozen=True, slots=True)
class CriticalPath:
    """The longest ``S -> E`` path: its length (ms) and its nodes with the weight of each edge taken."""

    length_ms: float
    nodes: tuple[str, ...]
    weights_ms: tuple[float, ...]

    def stage_ms(self) -> dict[str, float]:
        """Time on the path by stage (``map``, ``shuffle``, ``reduce``)."""
        out: dict[str, float] = {}
        for node, w in zip(self.nodes, self.weights_ms, strict=False):
            stage = node.split(":")[0]
            if stage in ("map", "shuffle", "reduce"):
                out[stage] = out.get(stage, 0.0) + w
        return out


def _dag_longest_path(g: nx.DiGraph) -> list[str]:
    """networkx's ``dag_longest_path(g, weight="weight", default_weight=0.0)`` on a DiGraph, path for path.

    The same walk in the same order: nodes by networkx's topological generations (Kahn's
    algorithm: the nodes of in-degree 0 in insertion order, then the children each frees, in
    order), each node's predecessors in insertion order, the first heaviest kept (ties go as
    networkx's ``max``), a path never below 0, and the end the first node of the greatest
    distance.  A cycle raises ``NetworkXUnfeasible``.  networkx asks whether the graph is a
    multigraph once per edge and builds a view per node; at 25,000 tasks that was two thirds
    of the path's time (tests/predict/test_critical_path_model.py compares the two on random graphs).
    """
    succ, pred = g._succ, g._pred  # the adjacency dicts themselves: their views cost a call per node
    indegree = {v: len(ins) for v, ins in pred.items()}
    generation = [v for v, d in indegree.items() if d == 0]
    dist: dict[str, tuple[float, str]] = {}
    while generation:
        freed = []
        for v in generation:
            best: tuple[float, str] | None = None
            for u, data in pred[v].items():
                length = dist[u][0] + data.get("weight", 0.0)
                if best is None or length > best[0]:
                    best = (length, u)
            dist[v] = best if best is not None and best[0] >= 0 else (0, v)
            for child in succ[v]:
                indegree[child] -= 1
                if indegree[child] == 0:
                    freed.append(child)
        generation = freed
    if len(dist) < len(indegree):
        raise nx.NetworkXUnfeasible("Graph contains a cycle")
    if not dist:
        return []
    v = max(dist, key=lambda x: dist[x][0])
    path: list[str] = []
    u = None
    while u != v:
        path.append(v)
        u = v
        v = dist[v][1]
    path.reverse()
    return path


def critical_path(g: nx.DiGraph) -> CriticalPath:
    """The longest ``S -> E`` path of a task graph (Desai et al. 2012, section 3.5).

    :func:`_dag_longest_path` (networkx's ``dag_longest_path``) sorts the graph topologically
    (a cycle is an error) and keeps, per node, the heaviest way in.
    """
    try:
        nodes = _dag_longest_path(g)
    except nx.NetworkXUnfeasible:
        raise PredictionError("the task graph has a cycle; no critical path") from None
    if not nodes or nodes[0] != START:
        nodes = [START, *nodes]
    weights = tuple(float(g.edges[u, v]["weight"]) for u, v in itertools.pairwise(nodes))
    if nodes[-1] != END:  # all-zero tails: close the path at E
        tail = nx.shortest_path(g, nodes[-1], END)
        weights += tuple(float(g.edges[u, v]["weight"]) for u, v in itertools.pairwise(tail))
        nodes = [*nodes, *tail[1:]]
    return CriticalPath(sum(weights), tuple(nodes), weights)
