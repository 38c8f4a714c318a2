"""Herodotou 2011's dataflow: the map side's spills, the reduce side's shuffle and merges, as Hadoop logged."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path

import pytest

from phaseline.errors import PredictionError
from predict.core import JobSettings
from predict.dataflow import DataStats, ReduceDataflow, map_dataflow, reduce_dataflow
from tests.conftest import REPO
from tests.predict.doubles import MB

PLAIN = DataStats(
    map_size_sel=1.0,
    map_recs_sel=1.0,
    combine_size_sel=1.0,
    combine_recs_sel=1.0,
    use_combine=False,
    input_compress_ratio=1.0,
    interm_compress_ratio=1.0,
    reduce_size_sel=1.0,
    reduce_recs_sel=1.0,
    out_compress_ratio=1.0,
)


def test_spills_by_hand() -> None:
    """Hadoop 0.20: io.sort.mb=100, 80 % spill, 5 % records: the 16-byte accounting part caps a spill at
    262,144 records.

    eq. 12: floor(100 * 2^20 * 0.95 * 0.8 / 100) = 796,917 serialized records of 100 B;
    eq. 13: floor(100 * 2^20 * 0.05 * 0.8 / 16) = 262,144 accounting entries;
    eq. 16: ceil(1,000,000 / 262,144) = 4 spills, merged in one pass.
    """
    m = map_dataflow(1e8, 1e6, PLAIN, JobSettings(reduces=4, sort_record_percent=0.05))
    assert m.spill_buffer_recs == 262_144
    assert m.spill_buffer_bytes == pytest.approx(262_144 * 100)
    assert (m.spills, m.merge_passes, m.final_merge_spills) == (4, 1, 4)
    assert m.interm_bytes == pytest.approx(1e8)
    # a bigger record share moves the limit to the serialization buffer
    wide = map_dataflow(1e8, 1e6, PLAIN, JobSettings(reduces=4, sort_record_percent=0.5))
    assert wide.spill_buffer_recs == math.floor(100 * MB * 0.5 * 0.8 / 100)


def test_spills_by_hand_hadoop2() -> None:
    """Hadoop 2+ (no io.sort.record.percent): 100 B records take 116 B each of the one 80 MiB buffer.

    floor(100 * 2^20 * 0.8 / 116) = 723,155 records a spill; ceil(1,000,000 / 723,155) = 2 spills.
    """
    m = map_dataflow(1e8, 1e6, PLAIN, JobSettings(reduces=4))
    assert m.spill_buffer_recs == 723_155
    assert m.spills == 2
    # the rule predict.tasks.single_spill applies: a map output it calls one spill spills once
    from predict.tasks import single_spill

    one = map_dataflow(6e7, 6e5, PLAIN, JobSettings(reduces=4))
    assert single_spill(6e7, 6e5, JobSettings(reduces=4))
    assert one.spills == 1
    assert JobSettings.from_config({"io.sort.record.percent": "0.05"}).sort_record_percent == 0.05
    assert JobSettings.from_config({"mapreduce.task.io.sort.mb": "100"}).sort_record_percent is None
    with pytest.raises(PredictionError, match=r"record\.percent must be within"):
        JobSettings(reduces=1, sort_record_percent=0.0)


def test_combiner_in_final_merge_only_from_three_spills() -> None:
    """Eq. 28: the combiner runs again in the final merge when at least min.num.spills.for.combine spills."""
    comb = replace(PLAIN, use_combine=True, combine_size_sel=0.5, combine_recs_sel=0.5)
    paper = JobSettings(reduces=1, sort_record_percent=0.05)  # Hadoop 0.20's buffer, as in the paper
    two = map_dataflow(1e8 * 2 / 4, 1e6 * 2 / 4, comb, paper)  # 2 spills
    four = map_dataflow(1e8, 1e6, comb, paper)  # 4 spills
    assert two.spills == 2
    assert not two.combine_in_merge
    assert two.interm_bytes == pytest.approx(5e7 * 0.5)
    assert four.spills == 4
    assert four.combine_in_merge
    assert four.interm_bytes == pytest.approx(1e8 * 0.5 * 0.5)


def _reduce_for_segment(segment_bytes: float, n_maps: int, **kw: float) -> ReduceDataflow:
    """A reduce whose map segments are ``segment_bytes`` each (one reduce, so segment = map output)."""
    s = JobSettings(reduces=1, reduce_task_heap_mb=200, io_sort_mb=1000, **kw)  # type: ignore[arg-type]
    m = map_dataflow(segment_bytes, segment_bytes / 100, PLAIN, s)
    return reduce_dataflow(m, n_maps, 1, PLAIN, s)


def test_shuffle_case_1_segments_below_a_quarter_of_the_buffer() -> None:
    """Buffer 0.7 x 200 MB = 140 MB, a quarter is 35 MB; 30 MB segments stay in memory (eqs. 43-49).

    Merge threshold 0.66 x 140 = 92.4 MB -> 3.08 segments; ceil (4 x 30 = 120 MB) fits in 140 MB,
    so 4 segments per shuffle file; 10 maps -> 2 files on disk, 2 segments left in memory.
    """
    r = _reduce_for_segment(30 * MB, 10)
    assert r.in_memory
    assert r.segs_per_shuffle_file == 4
    assert (r.shuffle_files, r.segs_in_mem) == (2, 2)
    assert r.shuffle_file_bytes == pytest.approx(120 * MB)


def test_shuffle_case_2_segments_above_a_quarter_go_to_disk() -> None:
    """40 MB >= 35 MB: every segment becomes its own shuffle file (eqs. 50-54)."""
    r = _reduce_for_segment(40 * MB, 10)
    assert not r.in_memory
    assert (r.segs_per_shuffle_file, r.shuffle_files, r.segs_in_mem) == (1, 10, 0)
    assert r.shuffle_file_bytes == pytest.approx(40 * MB)


def test_reduce_side_merge_three_steps() -> None:
    """30 map segments of 40 MB straight to disk, sort factor 10.

    eq. 55: 30 >= 2F - 1 = 19 -> floor((30 - 19) / 10) + 1 = 2 disk merges of 10 files;
    eq. 59: 10 files stay unmerged -> 12 on disk; nothing in memory, so step 1 is empty;
    step 2 merges 12 files: eq. 22 reads 3 of them (first pass of (12-1) mod 9 + 1 = 3), in proportion
    3/12 of the 1,200 MB on disk; step 3 merges the remaining 10 files straight into the reduce.
    """
    r = _reduce_for_segment(40 * MB, 30)
    assert (r.disk_merges, r.unmerged_files) == (2, 10)
    assert r.step1_bytes == 0
    assert r.files_from_mem == 0
    assert r.step2_files == 12
    assert r.step2_bytes == pytest.approx(3 / 12 * 30 * 40 * MB)
    assert r.step3_files == 10
    assert r.step3_bytes == 0


def test_step_1_evicts_segments_from_memory() -> None:
    """Case 1 with few maps: all segments stay in memory; reduce.input.buffer.percent=0 evicts them all
    into one file (eq. 70), which step 3 merges with nothing else."""
    r = _reduce_for_segment(1 * MB, 5)
    assert (r.shuffle_files, r.segs_in_mem, r.evicted_segs, r.files_from_mem) == (0, 5, 5, 1)
    assert r.step1_bytes == pytest.approx(5 * MB)
    kept = _reduce_for_segment(1 * MB, 5, reduce_input_buffer_percent=0.5)
    assert kept.evicted_segs == 0
    assert kept.segs_remain_mem == 5


def test_reduce_memory_holds_framed_segments_as_hadoop_logged(tmp_path: Path) -> None:
    """The bundled 8-map run (16 MiB reduce memory): Hadoop's MergeManager logged two in-memory merges of
    4 segments and a final merge of 0 in-memory and 2 on-disk outputs.  Segments take their shuffled
    (materialized) size in memory: IFile's framing is no compression.  Divided by materialized / raw
    (1.02), they were sized 5 to a file: 1 file and 3 segments left in memory."""
    from ingest.pipeline import ingest_paths
    from phaseline.store import Store
    from predict.herodotou_stats import data_stats
    from predict.tasks import profiled_settings
    from profiles.extract import extract_profile

    run = REPO / "sample_traces" / "bench-8mb-sel1.8-merges"
    log = (run / "logs" / "job.log").read_text()
    merges = re.findall(r"Initiating in-memory merge with (\d+) segments", log)
    ((in_memory, on_disk),) = re.findall(
        r"finalMerge called with (\d+) in-memory map-outputs and (\d+) on-disk", log
    )
    store = Store(tmp_path / "store")
    ingest_paths([run], store)
    con = store.connect()
    (job_id,) = con.execute("SELECT job_id FROM jobs").fetchone()
    profile = extract_profile(con, job_id)
    settings = profiled_settings(profile)
    stats, _ = data_stats(profile, settings)
    assert stats.interm_compress_ratio > 1.01  # the framing, measured
    assert stats.segment_compress_ratio == 1.0
    m = map_dataflow(profile.input.avg_split_bytes, profile.input.avg_split_records, stats, settings)
    r = reduce_dataflow(m, profile.input.splits, settings.reduces, stats, settings)
    assert r.shuffle_files == len(merges) == int(on_disk) == 2
    assert r.segs_in_mem == int(in_memory) == 0
    assert [int(n) for n in merges] == [profile.input.splits // r.shuffle_files] * r.shuffle_files  # 4 + 4
