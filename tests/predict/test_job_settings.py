"""Job settings from Hadoop's configuration names and --set, sizes parsed, and the values refused."""

from __future__ import annotations

import math
import re

import pytest

from phaseline.errors import PredictionError
from predict.core import Cluster, Dataset, JobSettings
from predict.units import SizeError, format_size, parse_size
from tests.predict.doubles import GB, MB


def test_settings_read_hadoop_config_names() -> None:
    s = JobSettings.from_config(
        {
            "mapreduce.task.io.sort.mb": "256",
            "io.sort.factor": "25",
            "mapreduce.map.output.compress": "true",
            "mapreduce.reduce.java.opts": "-Djava.net.preferIPv4Stack=true -Xmx1536m",
            "dfs.blocksize": "134217728",
            "mapreduce.job.reduces": "12",
            "unrelated.key": "x",
        }
    )
    assert (s.io_sort_mb, s.sort_factor, s.compress_map_output, s.reduces) == (256.0, 25, True, 12)
    assert s.reduce_task_heap_mb == 1536.0
    assert s.split_bytes == 128 * MB
    assert s.with_setting("io.sort.mb", "512").io_sort_mb == 512.0
    with pytest.raises(PredictionError, match="unknown setting"):
        s.with_setting("io.sort.megabytes", "1")
    with pytest.raises(PredictionError, match="cannot read value"):
        s.with_setting("io.sort.factor", "many")
    with pytest.raises(PredictionError, match="sort factor"):
        JobSettings(reduces=1, sort_factor=1)
    # JVM options without -Xmx leave the heap at its default; a bare number is megabytes
    assert JobSettings.from_config({"mapred.child.java.opts": "-verbose:gc"}).reduce_task_heap_mb == 200.0
    assert s.with_setting("reduce_task_heap_mb", "512").reduce_task_heap_mb == 512.0
    # The merge manager divides mapreduce.reduce.memory.totalbytes where it is set (LocalJobRunner
    # and the local engine set it), whatever -Xmx says and in whichever order the keys come
    total = {"mapreduce.reduce.memory.totalbytes": str(44 * MB)}
    xmx = {"mapreduce.reduce.java.opts": "-Xmx1536m"}
    for config in ({**total, **xmx}, {**xmx, **total}):
        assert JobSettings.from_config(config).reduce_task_heap_mb == 44.0
    assert s.with_setting("mapreduce.reduce.memory.totalbytes", str(64 * MB)).reduce_task_heap_mb == 64.0
    assert JobSettings.from_config({"mapreduce.reduce.memory.totalbytes": " "}).reduce_task_heap_mb == 200.0


@pytest.mark.parametrize(
    ("text", "expected"),
    [("50G", 50 * GB), ("512M", 512 * MB), ("1.5T", int(1.5 * 2**40)), ("4096", 4096), ("128MiB", 128 * MB)],
)
def test_parse_size(text: str, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["50Q", "-3G", "", "G", "9" * 310, "9000P", 1e300, float("nan")])
def test_parse_size_rejects(text: str | float) -> None:
    with pytest.raises(SizeError):
        parse_size(text)


def test_format_size() -> None:
    assert format_size(50 * GB) == "50.0G"
    assert format_size(300 * MB) == "300M"


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("dfs.block.size", "0"),
        ("split_bytes", "0"),
        ("interm_compress_ratio", "-1"),
        ("interm_compress_ratio", "0"),
    ],
)
def test_a_split_size_or_compression_ratio_that_cannot_be_is_refused(key: str, value: str) -> None:
    # a 0 split size had raised ZeroDivisionError in resolve_input; a negative compression ratio gave
    # herodotou negative shuffle times, and 0 was silently replaced by the measured ratio
    with pytest.raises(PredictionError, match="must be a finite number > 0"):
        JobSettings(reduces=1).with_setting(key, value)


def test_a_count_with_a_fraction_is_refused_not_rounded() -> None:
    # `--set reduces=1.5` had become 1 reduce and `--set nodes=1.5` 2 nodes, without a word
    from predict.edits import Scenario, apply_edits, parse_edit

    with pytest.raises(PredictionError, match=r"cannot read value '1\.5' as a finite int"):
        JobSettings(reduces=1).with_setting("reduces", "1.5")
    assert JobSettings(reduces=1).with_setting("reduces", "3.0").reduces == 3
    base = Scenario(Cluster(2, 2, 2), Dataset(GB), JobSettings(reduces=1))
    for text in ("nodes=1.5", "splits=2.5"):
        with pytest.raises(PredictionError, match="not a whole number"):
            apply_edits(base, [parse_edit(text)])
    assert apply_edits(base, [parse_edit("nodes=+2")]).cluster.nodes == 4


def test_a_profiled_configuration_without_a_usable_split_size_is_read_without_it() -> None:
    # a conf with dfs.blocksize 0 had made every prediction of its profile fail (a 0 split size)
    from phaseline.errors import DataQualityWarning

    with pytest.warns(DataQualityWarning, match="dfs.blocksize = '0' is no split size; it is ignored"):
        settings = JobSettings.from_config({"dfs.blocksize": "0", "io.sort.mb": "50"})
    assert settings.split_bytes is None
    assert settings.io_sort_mb == 50


@pytest.mark.parametrize(
    ("key", "value"),
    [("reduce_task_heap_mb", "inf"), ("reduce_task_heap_mb", "nan"), ("mapred.child.java.opts", "inf"),
     ("mapreduce.reduce.memory.totalbytes", "inf"), ("dfs.blocksize", "nan")],
)  # fmt: skip
def test_a_heap_or_size_that_is_not_finite_is_refused_by_name(key: str, value: str) -> None:
    # inf MB of reduce heap reached the shuffle arithmetic (OverflowError: cannot convert float
    # infinity to integer, in Herodotou's dataflow: `predict --model all` died); nan was taken.
    with pytest.raises(
        PredictionError, match=rf"setting '{re.escape(key)}': cannot read value '{value}' as a finite"
    ):
        JobSettings(reduces=1).with_setting(key, value)  # --set KEY=VALUE
    with pytest.raises(PredictionError, match="must be finite and > 0"):
        JobSettings(reduces=1, reduce_task_heap_mb=math.nan)
