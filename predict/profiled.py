"""A job's input shape (splits, their sizes and records), and the profiled run's own shape and settings.

:func:`predict.tasks.resolve_input` derives the shape of a new dataset; the models price a
new run against the profiled one (:func:`profiled_shape`, :func:`profiled_settings`).
"""

from __future__ import annotations

from dataclasses import dataclass

from predict.settings import JobSettings
from profiles.profile import JobProfile

__all__ = ["InputShape", "profiled_settings", "profiled_shape"]


@dataclass(frozen=True, slots=True)
class InputShape:
    """How the new input splits into map tasks (Zhang et al. 2013, section 5: number and size of blocks)."""

    splits: int
    avg_split_bytes: float
    max_split_bytes: float
    avg_split_records: float
    max_split_records: float
    assumptions: tuple[str, ...]


def profiled_shape(profile: JobProfile) -> InputShape:
    """The profiled run's own input shape."""
    p = profile.input
    return InputShape(
        p.splits, p.avg_split_bytes, p.max_split_bytes, p.avg_split_records, p.max_split_records, ()
    )


def profiled_settings(profile: JobProfile) -> JobSettings:
    """The settings the profiled run ran with (its recorded configuration, Hadoop defaults otherwise)."""
    return JobSettings.from_config(profile.source.config, reduces=profile.num_reduces)
