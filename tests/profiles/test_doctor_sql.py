"""Golden tests for profiles/sql/doctor: one tiny inline job per case, the heuristic, the expected grade.

Each case builds one job, ``job_1_0001``, from a few lines: its maps and reduces (a start, a
finish and counters each), its configuration, and where a heuristic reads the task logs, their
events.  The grades use the shipped thresholds (``profiles/doctor.toml``), so each expected
severity is worked out in a comment from those limits.
"""

from __future__ import annotations

import pytest

from profiles.doctor import Heuristic, Severity, diagnose
from tests.profiles.doctor_jobs import JOB, MB, MIN, MiB, Task, grade, make_con, maps_of
from tests.profiles.profiles_doubles import make_con as empty_store_of

# -- Dr. Elephant's heuristics ----------------------------------------------------------------


def test_mapper_skew_two_groups_capped_by_count_and_size() -> None:
    # 90 maps of 8 MB and 10 of 128 MB: mean 20 MB splits them; deviation 128/8 = 16 (Critical),
    # 100 tasks (Severe), the large group at 128 MB / 128 MiB = 0.95 of a block (Severe) -> Severe
    maps = [Task(0, MIN, {"BYTES_READ": 8 * MB}) for _ in range(90)]
    maps += [Task(0, MIN, {"BYTES_READ": 128 * MB}) for _ in range(10)]
    row = grade(make_con(maps), Heuristic.MAPPER_SKEW)
    assert (row["level"], row["value"], row["skipped"]) == (3, pytest.approx(16.0), None)
    assert row["detail"] == "100 mappers: 10 average 128.0 MB, 90 average 8.0 MB (16.0x)"


def test_mapper_skew_few_tasks_is_at_most_low() -> None:
    maps = [Task(0, MIN, {"BYTES_READ": b}) for b in (MB, MB, MB, MB, MB, MB, MB, MB, MB, 200 * MB)]
    row = grade(make_con(maps), Heuristic.MAPPER_SKEW)
    assert row["level"] == 1  # deviation 200 (Critical) but 10 tasks: Low


@pytest.mark.parametrize(
    ("maps", "why"),
    [
        ([Task(0, MIN)], "no successful mapper with a known input size (no counters)"),
        ([Task(0, MIN, {"BYTES_READ": MB})], "1 mapper(s) of one size: nothing to compare"),
    ],
)
def test_mapper_skew_skipped(maps: list[Task], why: str) -> None:
    row = grade(make_con(maps), Heuristic.MAPPER_SKEW)
    assert (row["level"], row["skipped"]) == (None, why)


def test_reducer_skew_reads_the_shuffle_bytes() -> None:
    reduces = [Task(0, MIN, {"REDUCE_SHUFFLE_BYTES": 100 * MB}) for _ in range(45)]
    reduces += [Task(0, MIN, {"REDUCE_SHUFFLE_BYTES": 500 * MB}) for _ in range(5)]
    # deviation 5 (Moderate), 50 tasks (Moderate), 500 MB of a 128 MiB block (Critical) -> Moderate
    row = grade(make_con(maps_of(1, 1), reduces), Heuristic.REDUCER_SKEW)
    assert (row["level"], row["value"]) == (2, pytest.approx(5.0))


def test_mapper_gc_ratio_capped_by_runtime() -> None:
    # GC 3 % of CPU (Severe) in 20-minute maps (runtime Critical) -> Severe
    long = maps_of(3, 20, GC_TIME_MILLIS=300, CPU_MILLISECONDS=10_000)
    assert (grade(make_con(long), Heuristic.MAPPER_GC)["level"]) == 3
    # the same ratio in 1-minute maps: None (GC in short tasks costs little)
    short = maps_of(3, 1, GC_TIME_MILLIS=300, CPU_MILLISECONDS=10_000)
    assert grade(make_con(short), Heuristic.MAPPER_GC)["level"] == 0


def test_gc_without_cpu_counters_is_skipped() -> None:
    row = grade(make_con(maps_of(3, 20, GC_TIME_MILLIS=300)), Heuristic.MAPPER_GC)
    assert row["skipped"] == "no mapper with GC_TIME_MILLIS and CPU_MILLISECONDS counters"


def test_reducer_gc() -> None:
    reduces = [Task(0, 13 * MIN, {"GC_TIME_MILLIS": 150, "CPU_MILLISECONDS": 10_000})]
    # 1.5 % (Low), 13 minutes (Severe) -> Low
    assert grade(make_con(maps_of(1, 1), reduces), Heuristic.REDUCER_GC)["level"] == 1


def test_mapper_time_many_short_maps() -> None:
    # 600 maps of 30 s: short Critical (<= 1 min), capped by 600 tasks (Severe) -> Severe, too short
    row = grade(make_con(maps_of(600, 0.5)), Heuristic.MAPPER_TIME)
    assert (row["level"], row["too_short"], row["value"]) == (3, True, pytest.approx(30.0))
    assert row["recommendation"].startswith("fewer, larger maps")


def test_mapper_time_few_long_maps() -> None:
    row = grade(make_con(maps_of(2, 70)), Heuristic.MAPPER_TIME)  # 70 min >= 60: Severe
    assert (row["level"], row["too_short"]) == (3, False)
    assert row["recommendation"].startswith("more, smaller maps")


def test_reducer_time_one_long_reduce() -> None:
    row = grade(make_con(maps_of(1, 1), [Task(0, 35 * MIN)]), Heuristic.REDUCER_TIME)
    assert (row["level"], row["value"]) == (2, pytest.approx(35 * 60.0))  # 35 min >= 30: Moderate


def test_mapper_speed_cpu_bound_maps() -> None:
    # 60 MB in 20 minutes: 0.05 MB/s, under 1/32 of 100 MB/s (Critical); 20 min (Severe) -> Severe
    row = grade(make_con(maps_of(4, 20, BYTES_READ=60 * MB)), Heuristic.MAPPER_SPEED)
    assert (row["level"], row["value"]) == (3, pytest.approx(0.05))


def test_mapper_speed_without_input_is_skipped() -> None:  # a Sleep job reads nothing
    row = grade(make_con(maps_of(4, 20, BYTES_READ=0)), Heuristic.MAPPER_SPEED)
    assert row["skipped"].startswith("no map read input")


def test_mapper_spill_ratio_capped_by_count() -> None:
    # 2.5 records spilled per record output (Severe), 100 maps (Moderate) -> Moderate
    maps = maps_of(100, 1, SPILLED_RECORDS=250, MAP_OUTPUT_RECORDS=100)
    row = grade(make_con(maps), Heuristic.MAPPER_SPILL)
    assert (row["level"], row["value"]) == (2, pytest.approx(2.5))


def test_mapper_spill_without_output_is_skipped() -> None:
    row = grade(make_con(maps_of(3, 1, SPILLED_RECORDS=0, MAP_OUTPUT_RECORDS=0)), Heuristic.MAPPER_SPILL)
    assert row["skipped"].startswith("the maps wrote no output records")


def test_mapper_memory_oversized_container() -> None:
    # 1 GiB used of a 4096 MB container: 0.25 (Critical); 4096 = 2x the default (Severe) -> Severe
    maps = maps_of(3, 1, PHYSICAL_MEMORY_BYTES=1024 * MiB)
    row = grade(make_con(maps, conf={"mapreduce.map.memory.mb": "4096"}), Heuristic.MAPPER_MEMORY)
    assert (row["level"], row["value"]) == (3, pytest.approx(0.25))


def test_mapper_memory_unset_container_takes_the_default() -> None:
    maps = maps_of(3, 1, PHYSICAL_MEMORY_BYTES=512 * MiB)
    row = grade(make_con(maps, conf={"mapreduce.map.memory.mb": "-1"}), Heuristic.MAPPER_MEMORY)
    # 512 of 2048 MB: 0.25 (Critical), capped by the default container itself (Low)
    assert (row["level"], row["value"]) == (1, pytest.approx(0.25))
    assert "the default" in row["detail"]


def test_reducer_memory_without_counter_is_skipped() -> None:
    row = grade(make_con(maps_of(1, 1), [Task(0, MIN)]), Heuristic.REDUCER_MEMORY)
    assert row["skipped"] == "no reducer with a PHYSICAL_MEMORY_BYTES counter above 0 (a 0 is not measured)"


def test_shuffle_sort_from_history_phases() -> None:
    #   REDUCE |shuffle (20 min)......................|sort 1|reduce 1|
    #   shuffle / reduce = 20 (Critical), 20 min (Severe) -> Severe
    r = Task(0, 22 * MIN, shuffle_finish=20 * MIN, sort_finish=21 * MIN)
    row = grade(make_con(maps_of(1, 1), [r]), Heuristic.SHUFFLE_SORT)
    assert (row["level"], row["value"]) == (3, pytest.approx(21.0))


def test_shuffle_sort_map_only_is_skipped() -> None:
    row = grade(make_con(maps_of(2, 1)), Heuristic.SHUFFLE_SORT)
    assert row["skipped"].startswith("no successful reduce")


def test_exceptions_failed_job_is_critical_and_quotes_the_error() -> None:
    maps = [Task(0, MIN, status="FAILED", error="java.io.IOException: disk full\n\tat x.y"), Task(0, MIN)]
    row = grade(make_con(maps, status="FAILED"), Heuristic.EXCEPTIONS)
    assert row["level"] == 4
    assert row["detail"] == (
        "job FAILED, 1 failed attempt(s); first: attempt_1_0001_m_000000_0: java.io.IOException: disk full"
    )


def test_exceptions_retried_attempts_in_a_successful_job() -> None:
    maps = [Task(0, MIN, status="FAILED", error="e"), Task(0, MIN, status="FAILED", error="e"), Task(0, MIN)]
    assert grade(make_con(maps), Heuristic.EXCEPTIONS)["level"] == 2  # 2 failed attempts: Moderate


@pytest.mark.parametrize(
    ("sizes", "level", "skipped"),
    [("100,600000000", 4, None), ("100, 200", 0, None), (None, None, "the job's configuration lists no "
                                                         "distributed-cache file sizes")],
)
def test_distributed_cache_limit(sizes: str | None, level: int | None, skipped: str | None) -> None:
    conf = {} if sizes is None else {"mapreduce.job.cache.files.filesizes": sizes}
    row = grade(make_con(maps_of(1, 1), conf=conf), Heuristic.DISTRIBUTED_CACHE)
    assert (row["level"], row["skipped"]) == (level, skipped)


# -- phaseline's own --------------------------------------------------------------------------


def test_map_spills_from_the_task_log() -> None:
    maps = [Task(0, MIN, spills=5) for _ in range(3)]  # 5 spills each: >= 4 Moderate
    row = grade(make_con(maps, conf={"mapreduce.task.io.sort.mb": "2"}), Heuristic.MAP_SPILLS)
    assert (row["level"], row["value"]) == (2, pytest.approx(5.0))
    assert row["detail"] == "3 maps: 5.0 spills each (up to 5) with a 2 MB sort buffer"


def test_map_spills_without_task_logs_is_skipped() -> None:
    row = grade(make_con(maps_of(3, 1)), Heuristic.MAP_SPILLS)
    assert row["skipped"].startswith("no task log")


@pytest.mark.parametrize(("factor", "passes", "level"), [("2", 3.0, 2), ("10", 0.0, 0), (None, 0.0, 0)])
def test_merge_passes_from_spills_and_sort_factor(factor: str | None, passes: float, level: int) -> None:
    # 5 spills merged 2 at a time: ceil(4 / 1) = 4 rounds, 3 before the last (Moderate);
    # with factor 10 (or Hadoop's default) one round
    conf = {} if factor is None else {"mapreduce.task.io.sort.factor": factor}
    row = grade(make_con([Task(0, MIN, spills=5)], conf=conf), Heuristic.MERGE_PASSES)
    assert (row["level"], row["value"]) == (level, pytest.approx(passes))


def test_shuffle_wait_early_reduces() -> None:
    #   MAP     |------------100 s-----------|
    #   MAP     |------------100 s-----------|
    #   REDUCE     |~~~~~~~~~~~~~ 90 s ~~~~~~~|--20 s--|    waiting 90 of 110 s: 0.82 (Critical)
    #   reduce time / map time = 110 / 200 = 0.55 (Critical) -> Critical
    maps = [Task(0, 100_000), Task(0, 100_000)]
    row = grade(make_con(maps, [Task(10_000, 120_000)]), Heuristic.SHUFFLE_WAIT)
    assert (row["level"], row["value"]) == (4, pytest.approx(90 / 110))


def test_shuffle_wait_reduces_after_the_maps() -> None:
    row = grade(make_con([Task(0, 100_000)], [Task(100_000, 120_000)]), Heuristic.SHUFFLE_WAIT)
    assert (row["level"], row["value"]) == (0, 0.0)


def test_stragglers_apart_from_skew() -> None:
    # five maps on the same data, one 4x the median: Severe (>= 3)
    maps = [Task(0, d, {"BYTES_READ": MB}) for d in (10_000, 10_000, 10_000, 10_000, 40_000)]
    row = grade(make_con(maps), Heuristic.STRAGGLERS)
    assert (row["level"], row["value"]) == (3, pytest.approx(4.0))
    assert "attempt_1_0001_m_000004_0" in row["detail"]


def test_a_slow_task_with_more_data_is_skew_not_a_straggler() -> None:
    maps = [Task(0, 10_000, {"BYTES_READ": MB}) for _ in range(4)] + [Task(0, 40_000, {"BYTES_READ": 4 * MB})]
    row = grade(make_con(maps), Heuristic.STRAGGLERS)
    assert (row["level"], row["value"], row["skipped"]) == (0, None, None)


def test_reduce_slots_idle_one_reduce_on_four_slots() -> None:
    #   0        50       100
    #   |maps....|
    #            |==r0===|        1 reduce, 4 slots configured: 3/4 idle (Critical);
    #                             the reduce stage is half the job (Critical) -> Critical
    conf = {"mapreduce.local.reduce.tasks.maximum": "4"}
    row = grade(make_con([Task(0, 50_000)], [Task(50_000, 100_000)], conf=conf), Heuristic.REDUCE_SLOTS_IDLE)
    assert (row["level"], row["value"]) == (4, pytest.approx(0.75))


def test_reduce_slots_idle_in_a_short_reduce_stage_is_capped() -> None:
    # one reduce on two slots (1/2 idle: Severe) for a tenth of the job (Low) -> Low
    conf = {"mapreduce.local.reduce.tasks.maximum": "2"}
    row = grade(make_con([Task(0, 90_000)], [Task(90_000, 100_000)], conf=conf), Heuristic.REDUCE_SLOTS_IDLE)
    assert (row["level"], row["value"]) == (1, pytest.approx(0.5))


def test_reduce_slots_idle_without_conf_counts_the_peak() -> None:
    reduces = [Task(50_000, 100_000), Task(50_000, 100_000)]  # two ran at once: 2 slots, both busy
    row = grade(make_con([Task(0, 50_000)], reduces), Heuristic.REDUCE_SLOTS_IDLE)
    assert (row["level"], row["value"]) == (0, pytest.approx(0.0))
    assert "the most that ran at once" in row["detail"]


@pytest.mark.parametrize(("compressed", "level"), [(None, 2), ("true", 0)])
def test_map_output_compression(compressed: str | None, level: int) -> None:
    # task time 100 + 100 (maps) + 100 (reduce: shuffle 60, sort 10): 70 / 300 = 0.23 (Moderate);
    # 2 GB of map output (Moderate) -> Moderate; compressed already -> None
    maps = maps_of(2, 100 / 60, MAP_OUTPUT_BYTES=1_000_000_000)
    reduce = Task(0, 100_000, shuffle_finish=60_000, sort_finish=70_000)
    conf = {} if compressed is None else {"mapreduce.map.output.compress": compressed}
    row = grade(make_con(maps, [reduce], conf=conf), Heuristic.MAP_OUTPUT_COMPRESSION)
    assert (row["level"], row["value"]) == (level, pytest.approx(70 / 300))


# -- the whole diagnosis ----------------------------------------------------------------------


def test_an_empty_store_skips_nothing_and_finds_nothing() -> None:
    d = diagnose(empty_store_of({}), JOB)
    assert d.findings == ()
    assert {s.heuristic for s in d.skipped} == set(Heuristic)


def test_diagnose_grades_what_the_data_allows_and_says_why_not_the_rest() -> None:
    d = diagnose(make_con(maps_of(3, 1)), JOB)
    graded = {f.heuristic for f in d.findings}
    skipped = {s.heuristic: s.reason for s in d.skipped}
    assert graded | skipped.keys() == set(Heuristic)
    assert not graded & skipped.keys()
    assert Heuristic.MAPPER_TIME in graded
    assert Heuristic.EXCEPTIONS in graded
    assert skipped[Heuristic.MAPPER_GC] == "no mapper with GC_TIME_MILLIS and CPU_MILLISECONDS counters"
    assert d.worst == max(f.severity for f in d.findings)
    assert all(isinstance(f.severity, Severity) for f in d.findings)
