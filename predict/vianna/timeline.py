"""The job's average execution timeline (Vianna et al. 2013, section 4.2.2).

:func:`build_timeline` walks the average execution of one job by the token
rules of section 4.2.2: every finishing map puts a token in the logical queue
of every reduce thread; a reduce thread runs up to ``ps`` shuffle-sorts at a
time, one per token, and its merge after its last shuffle-sort; map threads
take the next map as soon as they finish one.  The next event is the running
(sub-)task whose thread has the smallest cumulative average response time
(rule 1-3).  A map finishing while a reduce thread is blocked (no shuffle-sort
running, no token queued, shuffle-sorts still to do) is a synchronization
point and ends a parallel phase.

The walk works on *groups*: ``count`` identical threads (or reduces) that run
in lock step because their tasks belong to the same classes.  With every count
1 this is the paper's per-task formulation; with symmetric tasks aggregated
into classes the same walk costs O(classes) instead of O(tasks).  The
precedence tree built from a timeline is :func:`predict.vianna.tree.build_tree`.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, field

from phaseline.errors import PredictionError
from predict.vianna.timeline_records import Instance, Instances, MapGroup, ReduceGroup, Timeline

__all__ = ["SAME_TIME_RTOL", "Instance", "Instances", "MapGroup", "ReduceGroup", "Timeline", "build_timeline"]

#: Two events closer than this (relative to the clock) happen at the same time.
SAME_TIME_RTOL = 1e-9

_MAP, _SHUFFLE, _MERGE = "map", "shuffle", "merge"


@dataclass
class _ReduceState:
    group: ReduceGroup
    owner: tuple[str, int]
    started: bool = False
    done_shuffles: int = 0
    queue: list[list[int]] = field(default_factory=list)  # [shuffle class, tokens per reduce]
    free_lanes: list[int] = field(default_factory=list)  # kept sorted
    running: int = 0
    merging: bool = False
    finished: bool = False

    def blocked(self) -> bool:
        return (
            self.started
            and not self.merging
            and not self.finished
            and self.running == 0
            and not self.queue
            and self.done_shuffles < self.group.shuffles
        )


class _Walk:
    """One walk of the token rules: the instances so far, the event heap, the threads' states."""

    def __init__(self, means: Sequence[float], map_groups: Sequence[MapGroup],
                 reduce_groups: Sequence[ReduceGroup], ps: int) -> None:  # fmt: skip
        self.means = [float(m) for m in means]  # Python floats: numpy scalars made every sum and heap test slow
        self.map_groups = map_groups
        # the instances so far, by column (Instances' fields)
        self.cls: list[int] = []
        self.count: list[int] = []
        self.start: list[float] = []
        self.end: list[float] = []
        self.owner: list[tuple[str, int]] = []
        self.lanes: list[tuple[int, ...]] = []
        self.heap: list[tuple[float, int, str, int, int]] = []  # (end, seq, kind, group, instance index)
        self.map_next = [0] * len(map_groups)
        self.maps_running = 0
        self.states = [
            _ReduceState(g, ("reduce", r), free_lanes=list(range(min(ps, g.shuffles))))
            for r, g in enumerate(reduce_groups)
        ]

    def add(self, cls: int, count: int, start: float, end: float, owner: tuple[str, int], lanes: tuple[int, ...]) -> int:
        """A new instance; its index."""
        self.cls.append(cls)
        self.count.append(count)
        self.start.append(start)
        self.end.append(end)
        self.owner.append(owner)
        self.lanes.append(lanes)
        return len(self.cls) - 1

    def push(self, cls: int, count: int, now: float, owner: tuple[str, int], lanes: tuple[int, ...], kind: str,
             group: int) -> None:  # fmt: skip
        """A new instance of ``cls`` from ``now`` for its mean, and its end on the heap."""
        end = now + self.means[cls]
        idx = self.add(cls, count, now, end, owner, lanes)
        heapq.heappush(self.heap, (end, idx, kind, group, idx))

    def columns(self) -> Instances:
        return Instances(tuple(self.cls), tuple(self.count), tuple(self.start), tuple(self.end), tuple(self.owner),
                         tuple(self.lanes))  # fmt: skip

    def start_map(self, g: int, now: float) -> None:
        grp = self.map_groups[g]
        if self.map_next[g] < len(grp.maps):
            cls = grp.maps[self.map_next[g]]
            self.map_next[g] += 1
            self.maps_running += 1
            self.push(cls, grp.count, now, ("map", g), (0,), _MAP, g)

    def pump(self, r: int, now: float) -> None:
        """Reduce group ``r`` starts a shuffle-sort per queued token on its free lanes, or its merge."""
        st = self.states[r]
        if not st.started or st.merging or st.finished:
            return
        queue, free = st.queue, st.free_lanes
        if queue and free:
            means, add, heap, owner, count = self.means, self.add, self.heap, st.owner, st.group.count
            while queue and free:
                head = queue[0]
                cls, tokens = head
                take = min(tokens, len(free))
                lanes = tuple(free[:take])
                del free[:take]
                head[1] -= take
                if head[1] == 0:
                    queue.pop(0)
                st.running += take
                end = now + means[cls]
                idx = add(cls, count * take, now, end, owner, lanes)
                heapq.heappush(heap, (end, idx, _SHUFFLE, r, idx))  # as push()
        if st.running == 0 and st.done_shuffles == st.group.shuffles:
            st.merging = True
            merge = st.group.merge
            self.push(merge, st.group.count, now, st.owner, (-1,), _MERGE, r)

    def finish(self, kind: str, group: int, idx: int, now: float, touched: set[int]) -> bool:
        """An instance ends: its thread moves on.  Whether it was a map."""
        if kind == _MAP:
            self.maps_running -= 1
            self.start_map(group, now)
            return True
        st = self.states[group]
        touched.add(group)
        if kind == _SHUFFLE:
            self.finish_shuffle(st, self.lanes[idx])
        else:
            st.finished = True
            for r, other in enumerate(self.states):
                if other.group.after == group and not other.started:
                    other.started = True
                    touched.add(r)
        return False

    def rounds(self, r: int, now: float) -> float:
        """Reduce group ``r``'s rounds of shuffle-sorts on all its lanes that end before any other event:
        each is made and ended here, as the heap would pop it next and alone; when the next round's end
        it could not be.

        A round of every lane on a queued class with tokens for all of them, its end ``e`` earlier
        than the heap's next event ``t`` by more than :data:`SAME_TIME_RTOL` (``t > e + tol``:
        then ``(e, seq)`` is the heap's smallest key and its batch is itself), is what :meth:`pump`
        would start and :meth:`run`'s common case would end: the same instance (the same index,
        ``now + mean``), the same counts, the lanes freed again.  Between map waves a reduce thread
        runs a wave's tokens in such rounds (25,601 maps on 128 slots and 5 lanes: 10,240 of a walk's
        10,889 instances), each one had been a push, a pop and a pump.
        """
        st = self.states[r]
        queue, free = st.queue, st.free_lanes
        if not queue or st.running or not st.started or st.merging or st.finished:
            return now
        width = len(free)
        if width == 0 or queue[0][1] < width:
            return now
        heap, means = self.heap, self.means
        lanes, count, owner = tuple(free), st.group.count * width, st.owner
        add_cls, add_count, add_start = self.cls.append, self.count.append, self.start.append  # as add(), inlined
        add_end, add_owner, add_lanes = self.end.append, self.owner.append, self.lanes.append
        nxt = heap[0][0] if heap else float("inf")
        while queue:
            head = queue[0]
            cls, tokens = head
            if tokens < width:
                break
            end = now + means[cls]
            if not nxt > end + SAME_TIME_RTOL * max(1.0, abs(end)):
                break
            add_cls(cls)
            add_count(count)
            add_start(now)
            add_end(end)
            add_owner(owner)
            add_lanes(lanes)
            head[1] = tokens - width
            if head[1] == 0:
                queue.pop(0)
            st.done_shuffles += width
            now = end
        return now

    @staticmethod
    def finish_shuffle(st: _ReduceState, lanes: tuple[int, ...]) -> None:
        st.running -= len(lanes)
        st.done_shuffles += len(lanes)
        st.free_lanes.extend(lanes)
        st.free_lanes.sort()

    def deliver(self, finished_maps: list[int]) -> set[int]:
        """Every unfinished reduce thread gets a token per finished map (instance); the groups that got one."""
        tokens_to: set[int] = set()
        for idx in finished_maps:
            for r, st in enumerate(self.states):
                if st.finished:
                    continue
                shuffle = st.group.shuffle_of[self.cls[idx]]
                per_reduce = self.count[idx]  # every reduce gets one token per finished map
                if st.queue and st.queue[-1][0] == shuffle:
                    st.queue[-1][1] += per_reduce
                else:
                    st.queue.append([shuffle, per_reduce])
                tokens_to.add(r)
        return tokens_to

    def maps_done(self) -> bool:
        return self.maps_running == 0 and all(
            n == len(grp.maps) for n, grp in zip(self.map_next, self.map_groups, strict=True)
        )

    def run(self, start_after_maps: int, map_stage_sync: bool) -> list[float]:
        """Every event in time order (events within :data:`SAME_TIME_RTOL` as one); the sync points."""
        states, heap, lanes = self.states, self.heap, self.lanes
        syncs: list[float] = [0.0]
        for g in range(len(self.map_groups)):
            self.start_map(g, 0.0)
        maps_finished = 0
        first_wave = [r for r, st in enumerate(states) if st.group.after is None]
        if start_after_maps <= 0:
            for r in first_wave:
                states[r].started = True
                self.pump(r, 0.0)
        heappop, pump, finish_shuffle = heapq.heappop, self.pump, self.finish_shuffle
        while heap:
            top = heappop(heap)
            now = top[0]
            limit = now + SAME_TIME_RTOL * max(1.0, abs(now))
            if top[2] == _SHUFFLE and not (heap and heap[0][0] <= limit):
                # the common event, alone in its batch: one reduce group's fetches end
                finish_shuffle(states[top[3]], lanes[top[4]])
                pump(top[3], self.rounds(top[3], now))
                continue
            batch = [top]
            while heap and heap[0][0] <= limit:
                batch.append(heappop(heap))
            finished_maps: list[int] = []
            touched: set[int] = set()
            for _, _, kind, group, idx in batch:  # (what a task started here joins the next batch)
                if self.finish(kind, group, idx, now, touched):
                    finished_maps.append(idx)
            if finished_maps:
                blocked = [st.blocked() for st in states]
                maps_finished += sum(self.count[idx] for idx in finished_maps)
                if first_wave and not states[first_wave[0]].started and maps_finished >= start_after_maps:
                    for r in first_wave:  # slow-start reached: the reduces start, with every token queued so far
                        states[r].started = True
                        blocked[r] = True
                    touched.update(first_wave)
                tokens_to = self.deliver(finished_maps)
                touched |= tokens_to
                maps_done = map_stage_sync and self.maps_done() and any(not st.finished for st in states)
                if maps_done or any(blocked[r] for r in tokens_to):
                    syncs.append(now)
            for r in sorted(touched):
                self.pump(r, now)
        return syncs


def build_timeline(
    means: Sequence[float],
    map_groups: Sequence[MapGroup],
    reduce_groups: Sequence[ReduceGroup],
    ps: int,
    *,
    map_stage_sync: bool = False,
    start_after_maps: int = 0,
) -> Timeline:
    """Walk one job's average execution by the token rules (Vianna et al. 2013, section 4.2.2).

    Parameters
    ----------
    means
        Average response time of one task of each class (seconds).
    map_groups, reduce_groups
        The threads; see :class:`MapGroup` and :class:`ReduceGroup`.
    ps
        Shuffle-sorts a reduce thread runs in parallel.  A reduce has one
        shuffle-sort per map, so lanes past that many never run one: a thread
        gets ``min(ps, shuffles)`` lanes (``ps`` = 10^20 had asked for a list
        that long).
    map_stage_sync
        Also end a parallel phase when the last map finishes while reduce
        threads still run (the set of thread types changes there).
    start_after_maps
        Map tasks that must have finished before the first wave of reduce
        threads starts (Hadoop's reduce slow-start,
        ``mapreduce.job.reduce.slowstart.completedmaps`` times the maps; the
        paper's rule, a reduce's first shuffle-sort at the first map's end, is
        0 or 1).  Tokens of maps that finish before then wait in the queues;
        the moment the reduces start ends a parallel phase, as the first
        map's end does in the paper.

    Only the reduce groups an event touched are pumped after it (a pump of
    the others finds nothing to start), and whether a group is blocked is
    asked only when maps finished: a walk of shuffle-sorts a few
    microseconds long (25,601 maps, 240 reduces) is mostly such events.
    """
    if ps < 1:
        raise PredictionError(f"ps must be >= 1, got {ps}")
    total_maps = sum(g.count * len(g.maps) for g in map_groups)
    if reduce_groups and not 0 <= start_after_maps <= total_maps:
        raise PredictionError(
            f"start_after_maps must be between 0 and the job's {total_maps} maps, got {start_after_maps}"
        )
    walk = _Walk(means, map_groups, reduce_groups, ps)
    syncs = walk.run(start_after_maps, map_stage_sync)
    states = walk.states
    end = max(walk.end, default=0.0)
    if end > syncs[-1]:
        syncs.append(end)
    undone = [r for r, st in enumerate(states) if not st.finished]
    if undone:
        raise PredictionError(
            f"reduce groups {undone} never finished: tokens or shuffle counts are inconsistent"
        )
    return Timeline(walk.columns(), tuple(syncs), tuple(map_groups), tuple(reduce_groups))
