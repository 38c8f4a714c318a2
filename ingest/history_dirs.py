"""Where history lives: a history server's ``done/`` tree, taken by a time window.

The MapReduce JobHistory server moves each finished job's files into
``done/YYYY/MM/DD/<serial>/`` (the day it finished; a serial directory holds up
to 1,000 jobs): the ``.jhist``, named for the job and its times, and its
``_conf.xml``.  :func:`history_files` walks such a tree, or any directory, in
date order (names sort so) and keeps the files of a :class:`TimeWindow`:

* a ``YYYY``, ``YYYY/MM`` or ``YYYY/MM/DD`` directory whose span lies outside
  the window is not entered at all;
* a ``.jhist`` whose name carries the job's finish time (the done-file name
  ``job_<id>-<submit>-<user>-<name>-<finish>-<maps>-<reduces>-<status>-<queue>-<start>.jhist``)
  is kept when that time is in the window;
* a job's ``_conf.xml`` goes with its ``.jhist`` in the same directory;
* any other file is taken at its ``YYYY/MM/DD`` directory's day, else at its
  modification time.

Times are UTC (the history server's directories are its local days; a window
of whole days is exact on a server that runs in UTC, and a few hours wide
otherwise).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from ingest.walk import iter_files
from phaseline.errors import PhaselineError

_DAY_MS = 86_400_000
_YEAR, _MONTH, _DAY = re.compile(r"(19|20)\d\d"), re.compile(r"0[1-9]|1[0-2]"), re.compile(r"0[1-9]|[12]\d|3[01]")
#: A done-file name: the job id, then its submit time, ... and its finish time as the fifth field.
_DONE_NAME = re.compile(r"^(job_\d+_\d+)-(\d{10,13})-[^-]*-[^-]*-(\d{10,13})-")
_CONF_NAME = re.compile(r"^(job_\d+_\d+)_conf\.xml$")


class WindowError(PhaselineError, ValueError):
    """A --since/--until value that is no date or time, or a window that ends before it starts."""


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """Times from ``since_ms`` (inclusive) to ``until_ms`` (exclusive), ms since the epoch, UTC; None: open."""

    since_ms: int | None = None
    until_ms: int | None = None

    @classmethod
    def parse(cls, since: str | None, until: str | None) -> TimeWindow:
        """``--since`` / ``--until`` as given: ``YYYY-MM-DD`` or ``YYYY-MM-DDTHH:MM[:SS]`` (UTC).

        A date alone means its whole day: ``--until 2026-11-28`` keeps the 28th.

        >>> w = TimeWindow.parse("2026-11-27", "2026-11-28")
        >>> w.holds(_ms(datetime(2026, 11, 28, 23, 59, tzinfo=UTC))), w.holds(_ms(datetime(2026, 11, 29, tzinfo=UTC)))
        (True, False)
        """
        window = cls(_parse(since, "--since", end=False), _parse(until, "--until", end=True))
        if window.since_ms is not None and window.until_ms is not None and window.until_ms <= window.since_ms:
            raise WindowError(f"--until {until} is not after --since {since}")
        return window

    def holds(self, t_ms: int) -> bool:
        return (self.since_ms is None or t_ms >= self.since_ms) and (self.until_ms is None or t_ms < self.until_ms)

    def overlaps(self, start_ms: int, end_ms: int) -> bool:
        """Whether ``[start_ms, end_ms)`` meets the window."""
        return (self.since_ms is None or end_ms > self.since_ms) and (self.until_ms is None or start_ms < self.until_ms)


def _ms(t: datetime) -> int:
    return int(t.timestamp() * 1000)


def _parse(text: str | None, option: str, *, end: bool) -> int | None:
    if text is None:
        return None
    try:
        if len(text.strip()) == 10:  # a date alone: its whole day
            day = date.fromisoformat(text.strip())
            start = datetime(day.year, day.month, day.day, tzinfo=UTC)
            return _ms(start + timedelta(days=1) if end else start)
        t = datetime.fromisoformat(text.strip())
    except ValueError:
        raise WindowError(f"{option} {text!r} is no date (YYYY-MM-DD) or time (YYYY-MM-DDTHH:MM:SS)") from None
    return _ms(t if t.tzinfo is not None else t.replace(tzinfo=UTC))


def dated_span(path: Path) -> tuple[int, int] | None:
    """The span of time a ``.../YYYY[/MM[/DD]]`` path stands for (its last dated parts), or None.

    >>> [datetime.fromtimestamp(t / 1000, UTC).date().isoformat() for t in dated_span(Path("done/2026/02/28"))]
    ['2026-02-28', '2026-03-01']
    >>> dated_span(Path("done/2026/13")), dated_span(Path("logs/app"))
    (None, None)
    """
    parts = path.parts
    for n, patterns in ((3, (_YEAR, _MONTH, _DAY)), (2, (_YEAR, _MONTH)), (1, (_YEAR,))):
        tail = parts[-n:]
        if len(tail) == n and all(p.fullmatch(x) for p, x in zip(patterns, tail, strict=True)):
            year, month, day = (*map(int, tail), 1, 1)[:3]
            try:
                start = datetime(year, month, day, tzinfo=UTC)
            except ValueError:  # 2026/02/30
                return None
            if n == 3:
                stop = start + timedelta(days=1)
            elif n == 2:
                stop = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
            else:
                stop = datetime(year + 1, 1, 1, tzinfo=UTC)
            return _ms(start), _ms(stop)
    return None


def day_dir_span(path: Path) -> tuple[int, int] | None:
    """The span of the ``YYYY/MM/DD`` directory a file sits in, directly or in a serial directory below it."""
    for parent in (path.parent, path.parent.parent):
        span = dated_span(parent)
        if span is not None and span[1] - span[0] <= _DAY_MS:
            return span
    return None


def done_name_times(name: str) -> tuple[str, int, int] | None:
    """A done-file name's job id, submit and finish times (epoch ms), or None for another name.

    >>> done_name_times("job_1526555215992_0001-1526555642677-user-QuasiMonteCarlo-1526555658299-1-1-SUCCEEDED-default-1526555648931.jhist")
    ('job_1526555215992_0001', 1526555642677, 1526555658299)
    >>> done_name_times("job_1526555215992_0001_conf.xml")
    """
    done = _DONE_NAME.match(name) if name.endswith((".jhist", ".jhist.gz")) else None
    if done is None:
        return None
    submit, finish = (int(t) * (1000 if len(t) == 10 else 1) for t in done.group(2, 3))
    return done.group(1), submit, finish


def history_files(paths: Iterable[str | Path], window: TimeWindow | None = None) -> Iterator[Path]:
    """The files under ``paths`` (as :func:`~ingest.pipeline.iter_files` walks them) whose time is in ``window``.

    A file named directly is always kept; the window applies to what walking directories finds.
    """
    if window is None or (window.since_ms is None and window.until_ms is None):
        yield from iter_files(paths)
        return
    named = {Path(p) for p in paths}

    def keep_dir(d: Path) -> bool:
        span = dated_span(d)
        return span is None or window.overlaps(*span)

    kept_jobs: dict[tuple[Path, str], bool] = {}  # (directory, job id) -> its .jhist kept
    for f in iter_files(paths, keep_dir):
        if f in named:
            yield f
            continue
        name = f.name
        done = done_name_times(name)
        if done is not None:
            job_id, _, finish = done
            kept = kept_jobs[(f.parent, job_id)] = window.holds(finish)
        elif conf := _CONF_NAME.match(name):  # (sorted after its job's "job_<id>-....jhist": '-' < '_')
            job = kept_jobs.get((f.parent, conf.group(1)))
            kept = _in_window(f, window) if job is None else job
        else:
            kept = _in_window(f, window)
        if kept:
            yield f


def _in_window(f: Path, window: TimeWindow) -> bool:
    span = day_dir_span(f)
    if span is not None:
        return window.overlaps(*span)
    try:
        return window.holds(int(f.stat().st_mtime * 1000))
    except OSError:
        return True  # gone or unreadable: the ingest says so
