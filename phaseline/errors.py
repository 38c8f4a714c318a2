"""phaseline's exceptions and warnings.

One root, :class:`PhaselineError`; every child also inherits the builtin it
refines, so ``except ValueError`` in a caller's code still works.  Errors that
point into a file carry the file, the line or byte offset, and what to do next.

Warnings have their own root, :class:`PhaselineWarning`.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


class PhaselineError(Exception):
    """Root of every error phaseline raises on purpose."""


class TraceParseError(PhaselineError, ValueError):
    """A trace file is malformed at a known place.

    Parameters
    ----------
    path
        The file being read.
    message
        What is wrong.
    line
        1-based line number, where the format is line oriented.
    offset
        Byte offset into the (decompressed) file, where known.
    hint
        What the user can do about it.
    """

    def __init__(
        self,
        path: str | Path,
        message: str,
        *,
        line: int | None = None,
        offset: int | None = None,
        hint: str | None = None,
    ) -> None:
        self.path = str(path)
        self.message = message
        self.line = line
        self.offset = offset
        self.hint = hint
        super().__init__(self._render())

    def _render(self) -> str:
        where = self.path
        if self.line is not None:
            where += f":{self.line}"
        if self.offset is not None:
            where += f" (byte {self.offset})"
        text = f"{where}: {self.message}"
        if self.hint:
            text += f" ({self.hint})"
        return text


class TraceTruncatedError(TraceParseError):
    """A trace ends before its writer finished it (everything before the cut is good)."""


class UnknownFormatError(PhaselineError, ValueError):
    """No reader recognises a file's content."""

    def __init__(self, path: str | Path, detail: str = "") -> None:
        self.path = str(path)
        super().__init__(f"{path}: format not recognised{': ' + detail if detail else ''}")


class SchemaError(PhaselineError, ValueError):
    """Rows or a file do not match a declared table schema."""


class StoreError(PhaselineError, RuntimeError):
    """The store directory is missing, locked, or inconsistent."""


class StoreLockedError(StoreError):
    """Another process holds the store's write lock for too long."""


class QueryError(PhaselineError, ValueError):
    """A SQL query over the store failed."""


class NotFoundError(PhaselineError, LookupError):
    """A job, attempt, profile or other named object does not exist."""


class EngineError(PhaselineError, RuntimeError):
    """The local Hadoop engine could not run (missing Java, jars, or a failed job)."""


class ProfileError(PhaselineError, ValueError):
    """A job profile is invalid or cannot be extracted from the data."""


class PlatformModelError(PhaselineError, ValueError):
    """A platform model cannot be fitted, loaded or evaluated."""


class InsufficientDataError(PlatformModelError):
    """Too few measurements to fit a phase's model."""


class PredictionError(PhaselineError, ValueError):
    """A predictor got inputs it cannot work with."""


class SpecError(PhaselineError, ValueError):
    """A dataflow specification (HiTune language) is malformed."""


class ConfigError(PhaselineError, ValueError):
    """A configuration file (e.g. ``phaseline doctor --config``) is malformed: names the file and the key."""


class PhaselineWarning(UserWarning):
    """Root of phaseline's warnings."""


class ExtrapolationWarning(PhaselineWarning):
    """A model is evaluated outside the data range it was fitted on.

    A platform submodel's warning also says which (``phase``), at what size
    (``data_bytes``) and its fitted range (``fitted``), so that the CLI can say
    once for all the sizes of one phase what it would otherwise say per size.
    """

    def __init__(
        self,
        message: str,
        *,
        phase: str | None = None,
        data_bytes: float | None = None,
        fitted: tuple[float, float] | None = None,
    ) -> None:
        super().__init__(message)
        self.phase = phase
        self.data_bytes = data_bytes
        self.fitted = fitted


class ConvergenceWarning(PhaselineWarning):
    """An iterative fit or solver stopped before converging."""


class DataQualityWarning(PhaselineWarning):
    """Input data is usable but suspicious (inflated counters, missing phases, ...)."""


class PlatformMismatchWarning(PhaselineWarning):
    """A prediction for a cluster of another engine or shape than its platform model was measured on."""


class Said(list[PhaselineWarning]):
    """The phaseline warnings raised inside :func:`recording_warnings`, in order (each added as it is raised)."""

    @property
    def texts(self) -> tuple[str, ...]:
        """Each warning's text, in order, each once."""
        return tuple(dict.fromkeys(str(w) for w in self))


@contextmanager
def recording_warnings() -> Iterator[Said]:
    """Keep the :class:`PhaselineWarning` s raised inside the block instead of showing them, every one
    (a repeat from the same line too); other warnings show as the caller's filters say, as they come.

    Where a caller reports what a step said beside its result (a backtest row's warnings, a
    recommendation's notes, a worker's warnings sent back to the main process)::

        with recording_warnings() as said:
            profile = extract_profile(con, job_id)
        notes = said.texts
    """
    said = Said()
    with warnings.catch_warnings():  # (restores the filters and showwarning on the way out)
        warnings.simplefilter("always", PhaselineWarning)
        show = warnings.showwarning

        def keep(message: Warning | str, category: type[Warning], *where: Any, **more: Any) -> None:
            if isinstance(message, PhaselineWarning):
                said.append(message)
            else:
                show(message, category, *where, **more)

        warnings.showwarning = keep
        yield said


def first_line(exc: BaseException) -> str:
    """The first line of an error's message, or its type's name when it has none.

    DuckDB's messages go on with the query text and a caret under it; a CLI
    error or a finding wants the first line only.

    >>> first_line(ValueError("no such file\\nLINE 1: SELECT ..."))
    'no such file'
    >>> first_line(OSError())
    'OSError'
    """
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
