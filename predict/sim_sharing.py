"""Processor sharing of a node's cores among the maps the replay runs there (:mod:`predict.sim_events`).

On a cluster of shared containers (YARN) the maps of a node share its cores: under the operating
system's processor sharing, ``n`` CPU-bound tasks on ``P`` cores each progress at
``1 / max(1, n / P)`` of their speed alone (the processor-sharing queue: Kleinrock 1967; the CPU
centre of Vianna et al. 2013).  ``n`` changes whenever a map starts or ends on the node, and so does
every running map's rate: a map that outlives the others on its node finishes at its own speed.
:class:`CoreSharing` keeps each running map's demand left and re-rates the maps of a node whose
count changed, giving each a new end event; the replay skips an end event that is no longer its
map's (:meth:`CoreSharing.live`).  A replay that priced the share once, at a map's start, charged a
map started beside two about to end as if they ran throughout (benchmarks/BACKTEST.md, "Processor
sharing in the simulation's replay").  A node whose count changes back within one event (a map ends and
the next takes its container) moves no end: only maps whose rate changed get a new one.  A replay of
20,000 maps on 16 nodes of 8 containers and 4 cores ran at about 280,000 events/s (390,000 priced
once at the start, 135,000 re-rating every map at every change; 2026-12-02, one process).

>>> s = CoreSharing(cpus=1, slots_per_node=3)
>>> for task in (0, 1, 2):
...     s.join(task)
>>> [round(s.start(task, task, now=0.0, demand=d, kind=0, seq=task)) for task, d in enumerate((1e3, 2e3, 2e3))]
[3000, 6000, 6000]
>>> s.leave(0, 0, ended=True)  # the other two, 1000 ms of demand left each, now share the core
>>> [(round(t), task) for t, _, _, task, _ in s.reprice(now=3000.0, seq=3)]
[(5000, 1), (5000, 2)]
"""

from __future__ import annotations

from predict.contention import cpu_share_factor

__all__ = ["CoreSharing"]

Event = tuple[float, int, int, int, int]  # the replay's heap entry: (time, seq, kind, task, slot)


class CoreSharing:
    """The maps running on each node, their demand left, and the cores they share (module docstring)."""

    __slots__ = ("count", "cpus", "current", "dirty", "per_node", "running")

    def __init__(self, cpus: int, slots_per_node: int) -> None:
        self.cpus, self.per_node = cpus, slots_per_node
        self.count: dict[int, int] = {}
        #: node -> task -> [demand left (ms), when it was counted, the rate's factor, kind, slot]
        self.running: dict[int, dict[int, list[float]]] = {}
        self.current: dict[int, int] = {}  # task -> the seq of its live end event
        self.dirty: set[int] = set()  # nodes whose count changed since the last reprice

    def join(self, slot: int) -> None:
        """A map takes ``slot``: its node runs one more."""
        node = slot // self.per_node
        self.count[node] = self.count.get(node, 0) + 1
        self.dirty.add(node)

    def start(self, task: int, slot: int, *, now: float, demand: float, kind: int, seq: int) -> float:
        """The attempt of ``task`` (counted by :meth:`join`) starts with ``demand`` ms of work alone: its
        duration at the node's share now (ms); its end event is ``seq``."""
        node = slot // self.per_node
        factor = cpu_share_factor(self.count[node], self.cpus)
        self.running.setdefault(node, {})[task] = [demand, now, factor, float(kind), float(slot)]
        self.current[task] = seq
        return demand * factor

    def leave(self, task: int, slot: int, *, ended: bool) -> None:
        """The attempt of ``task`` ends; ``ended`` False where the map is retried at once on its slot
        (the node runs as many maps)."""
        node = slot // self.per_node
        self.running.get(node, {}).pop(task, None)
        self.current.pop(task, None)
        if ended:
            self.count[node] -= 1
            self.dirty.add(node)

    def live(self, task: int, seq: int) -> bool:
        """Whether the end event ``seq`` of a map ``task`` is its live one (not moved by a reprice)."""
        return self.current.get(task) == seq

    def reprice(self, *, now: float, seq: int) -> list[Event]:
        """New end events for the running maps of every node whose count changed (seqs from ``seq`` on)."""
        events: list[Event] = []
        for node in sorted(self.dirty):
            factor = cpu_share_factor(self.count.get(node, 0), self.cpus)
            for task, run in self.running.get(node, {}).items():
                if run[2] == factor:  # its rate unchanged (one ended, another took its container): its end stands
                    continue
                run[0] = max(0.0, run[0] - (now - run[1]) / run[2])
                run[1], run[2] = now, factor
                self.current[task] = seq
                events.append((now + run[0] * factor, seq, int(run[3]), task, int(run[4])))
                seq += 1
        self.dirty.clear()
        return events
