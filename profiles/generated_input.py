"""A generator's input: maps that make their records instead of reading them.

TeraGen's maps read no bytes: its input format hands each map a range of row numbers, each row
becomes a record (``MAP_INPUT_RECORDS`` counts them), and the map writes it (100 bytes a row);
RandomWriter and RandomTextWriter are alike.  A profile measures a job by the bytes its maps read
(Zhang et al. 2013, section 5: task durations scale with the data a task processes), and a generator
reads none.  Its input is therefore measured as what its maps make: each map's input bytes are the
bytes it writes (map-only) or emits, so the map selectivity is 1, the record width is a generated
record's, and the size a prediction asks for (``predict --input-bytes``) is the data to generate.
The profile warns that it did so, naming the job.  A run where any map read bytes is left as it is.
"""

from __future__ import annotations

import warnings

import pandas as pd

from phaseline.errors import DataQualityWarning

__all__ = ["generated_input"]


def generated_input(job_id: str, maps: pd.DataFrame) -> pd.DataFrame:
    """``maps`` (``data_skew.sql``'s map rows) with each map's input bytes taken as its output bytes where
    every map counted 0 bytes read but made records and output; otherwise ``maps`` unchanged."""
    read = pd.to_numeric(maps["input_bytes"], errors="coerce").astype("Float64")
    made = pd.to_numeric(maps["input_records"], errors="coerce").astype("Float64")
    out = pd.to_numeric(maps["output_bytes"], errors="coerce").astype("Float64")
    # every map counted 0 bytes read (one that did not count them, Rumen's -1, is no generator's evidence),
    # and made records and output: a count not known is no evidence either
    generator = (read == 0) & (made > 0) & (out > 0)
    if maps.empty or not generator.fillna(False).all():
        return maps
    warnings.warn(
        DataQualityWarning(
            f"{job_id}: its maps read no input but made {int(made.sum()):,} records (a generator such as "
            f"TeraGen): its input is taken as the {int(out.sum()):,} bytes they made, so predict's "
            "--input-bytes is the data to generate"
        ),
        stacklevel=3,
    )
    return maps.assign(input_bytes=out)
