"""Merge-pass arithmetic of Hadoop's external sort (Herodotou 2011, section 5, eqs. 21-23 and 26).

A *merge pass* merges at most ``F`` (io.sort.factor) files; the first pass
merges just enough files that every later pass merges exactly ``F``.  For
``N <= F**2`` files the paper's closed forms apply; beyond that the paper
calls for simulation, which :func:`simulate_merge` does the way Hadoop's
``Merger`` does it (each pass takes the smallest segments).

Worked example from the paper: 28 spills, sort factor 10 -> two passes of 10
in the first round, then a final merge of 10 files (2 merged + 8 original):

>>> first_pass_files(28, 10), interm_merge_reads(28, 10), final_merge_files(28, 10), merge_passes(28, 10)
(10, 20, 10, 3)
"""

from __future__ import annotations

from dataclasses import dataclass

from phaseline.errors import PredictionError

__all__ = [
    "MergePlan",
    "final_merge_files",
    "first_pass_files",
    "interm_merge_reads",
    "merge_passes",
    "simulate_merge",
]


def _check(n: int, f: int) -> None:
    if n < 0 or f < 2:
        raise PredictionError(f"merge needs N >= 0 files and a sort factor >= 2 (N={n}, F={f})")


def first_pass_files(n: int, f: int) -> int:
    """Files read by the first merge pass, calcNumSpillsFirstPass (Herodotou 2011, eq. 21)."""
    _check(n, f)
    if n <= f:
        return n
    if (n - 1) % (f - 1) == 0:
        return f
    return (n - 1) % (f - 1) + 1


@dataclass(frozen=True, slots=True)
class MergePlan:
    """Outcome of merging ``n`` equal files with sort factor ``f``."""

    interm_reads: float  # original-file equivalents read (and written) by intermediate passes
    final_files: int  # files merged by the final pass
    passes: int  # merge passes including the final one (0 when n <= 1)


def simulate_merge(n: int, f: int) -> MergePlan:
    """Merge ``n`` unit-size files as Hadoop's ``Merger`` does: the first pass takes eq. 21's count,
    every later pass the ``f`` smallest segments, until at most ``f`` remain for the final pass.

    Segments are kept as counts per size: while at least ``f`` of the smallest
    size remain, the passes that merge ``f`` of them each are taken together,
    so a reduce merging millions of map outputs costs a few steps per merge
    level, not one heap operation per segment (the result is the same).

    >>> simulate_merge(28, 10)
    MergePlan(interm_reads=20.0, final_files=10, passes=3)
    """
    _check(n, f)
    if n <= 1:
        return MergePlan(0.0, n, 0)
    sizes: dict[float, int] = {1.0: n}  # segment size -> how many
    total, reads, passes = n, 0.0, 0
    take = first_pass_files(n, f)
    while total > f:
        smallest = min(sizes)
        count = sizes[smallest]
        if take == f and count >= f:  # k passes alike: f segments of the smallest size each
            k = min(count // f, -(-(total - f) // (f - 1)))
            _add(sizes, smallest, -k * f)
            _add(sizes, smallest * f, k)
            reads += k * f * smallest
            passes += k
            total -= k * (f - 1)
            continue
        merged, need = 0.0, take
        while need:
            smallest = min(sizes)
            got = min(sizes[smallest], need)
            _add(sizes, smallest, -got)
            merged += got * smallest
            need -= got
        _add(sizes, merged, 1)
        reads += merged
        passes += 1
        total -= take - 1
        take = f
    return MergePlan(reads, total, passes + 1)


def _add(sizes: dict[float, int], size: float, count: int) -> None:
    left = sizes.get(size, 0) + count
    if left:
        sizes[size] = left
    else:
        del sizes[size]


def interm_merge_reads(n: int, f: int) -> float:
    """Files read during intermediate merge rounds, calcNumSpillsIntermMerge (Herodotou 2011, eq. 22).

    For ``n > f**2`` (where the paper's closed form stops) the count comes
    from :func:`simulate_merge`, in original-file equivalents.
    """
    _check(n, f)
    if n <= f:
        return 0
    if n <= f * f:
        p = first_pass_files(n, f)
        return p + (n - p) // f * f
    return simulate_merge(n, f).interm_reads


def final_merge_files(n: int, f: int) -> int:
    """Files merged by the final merge round, calcNumSpillsFinalMerge (Herodotou 2011, eq. 23)."""
    _check(n, f)
    if n <= f:
        return n
    if n <= f * f:
        p = first_pass_files(n, f)
        s = int(interm_merge_reads(n, f))
        return 1 + (n - p) // f + (n - s)
    return simulate_merge(n, f).final_files


def merge_passes(n: int, f: int) -> int:
    """Total merge passes, dNumMergePasses (Herodotou 2011, eq. 26); simulated beyond ``f**2``."""
    _check(n, f)
    if n <= 1:
        return 0
    if n <= f:
        return 1
    if n <= f * f:
        return 2 + (n - first_pass_files(n, f)) // f
    return simulate_merge(n, f).passes
