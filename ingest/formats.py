"""Format detection from content, and the catalogue of readers.

Each reader module exposes ``FORMATS``: a tuple of :class:`Format` (a name,
a ``sniff(head, path)`` test on the first decompressed bytes, and the reader
entry point).  :func:`detect` asks them in order, most specific first; file
names are never trusted (only used as hints for ids inside readers).
"""

from __future__ import annotations

import importlib
import warnings
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ingest.base import ReadContext, Row, RowBlock
from ingest.opening import read_head
from phaseline.errors import DataQualityWarning

Sniffer = Callable[[bytes, Path], bool]
Reader = Callable[[Path, ReadContext], Iterator[Row | RowBlock]]


@dataclass(frozen=True, slots=True)
class Format:
    """A trace format phaseline reads."""

    name: str
    sniff: Sniffer
    read: Reader
    doc: str
    landed: bool = True  # False: recognised but deliberately not read (status 'skipped')
    #: Tables where every record counted in ``ctx.events_read`` is kept, one row each;
    #: the reconciliation check (``phaseline verify``) holds the reader to it.
    record_tables: tuple[str, ...] = ("events",)
    #: The reader may take the job id from the file's name (the content need not carry one), so
    #: byte-identical files named for different jobs are different sources.
    job_from_name: bool = False


# Reader modules, in detection order (most specific sniffers first).
READER_MODULES: tuple[str, ...] = (
    "ingest.jhist",
    "ingest.history_v1",
    "ingest.rumen",
    "ingest.engine_run",  # run.json of `phaseline engine run` (before the generic JSON readers)
    "ingest.job_summary",  # job summary lines (<job>.summary, mapred-jobsummary.log)
    "ingest.yarn_logs",  # `yarn logs -applicationId` output
    "ingest.tasklog",  # container syslog / LocalJobRunner job log
    "ingest.jfr",  # JDK Flight Recorder recordings (thread samples)
    "ingest.samples_hitune",  # HiTune four-field sampling records
    "ingest.hitune_csv",  # HiTune report CSVs (Chukwa csource/capp/ctags columns)
    "ingest.jstack",  # Java thread dumps (jstack / jcmd Thread.print)
    "ingest.rest_json",
    "ingest.conf_xml",
    "ingest.skipped",
    "ingest.properties",  # loosest sniffer (key=value lines): keep it last
)


@cache
def formats() -> tuple[Format, ...]:
    """Every format, in detection order."""
    return tuple(_in_order())


@cache
def _module_formats(name: str) -> tuple[Format, ...]:
    return tuple(importlib.import_module(name).FORMATS)


def _in_order() -> Iterator[Format]:
    """The formats in detection order, each reader module imported when its turn comes: detecting a
    ``.jhist`` imports no other reader (their imports cost about 0.05 s of every CLI start)."""
    for name in READER_MODULES:
        yield from _module_formats(name)


def detect(path: Path, head: bytes | None = None) -> Format | None:
    """The format of a file, judged from its first bytes; ``None`` if no reader claims it."""
    if head is None:
        head = read_head(path)
    for fmt in _in_order():
        try:
            claimed = fmt.sniff(head, path)
        except (OSError, EOFError, ValueError, zlib.error, RecursionError) as exc:
            # A sniffer that peeks further into a damaged file must not take the ingest down;
            # the file is then simply not of that format.
            warnings.warn(f"{path}: the {fmt.name} sniffer failed: {exc!r}", DataQualityWarning, stacklevel=2)
            claimed = False
        if claimed:
            return fmt
    return None
