"""Golden tests of the HiTune dataflow specification parser (Dai et al. 2011, Figures 7-8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from phaseline.errors import SpecError
from profiles.dataflow.spec import Cardinality, MatchStatus, load_spec, parse_spec, shipped_spec


def test_figure_8_parses_to_the_papers_graph() -> None:
    spec = shipped_spec("hadoop-0.20")
    assert spec.inputs == {"Input": "HDFS"}
    assert spec.outputs == {"Output": "HDFS"}
    assert list(spec.vertices) == ["map", "spill", "copier", "merge", "sort", "reduce"]
    assert spec.vertices["merge"].location == "InMemFSMergeThread.run or LocalFSMerger.run"
    assert [a.frames for a in spec.vertices["sort"].alternatives] == [
        ("ReduceCopier.createKVIterator", "ReduceCopier.access")
    ]
    assert [(e.source, e.target) for e in spec.edges.values()] == [
        ("Input", "map"), ("map", "spill"), ("spill", "copier"), ("copier", "merge"),
        ("merge", "sort"), ("sort", "reduce"), ("reduce", "Output"),
    ]
    map_pool, reduce_pool = spec.task_pools
    assert (map_pool.name, map_pool.cardinality) == ("Map", Cardinality(1, None))
    assert [(p.vertices, p.cardinality) for p in map_pool.phases[0].pools] == [
        (("map",), Cardinality(1, 1)), (("spill",), Cardinality(1, 1)),
    ]
    shuffle, last = reduce_pool.phases
    assert shuffle.name == "shuffle"
    assert [(p.name, p.vertices, p.group_size) for p in shuffle.pools] == [
        ("copy", ("copier",), 20), ("merge", ("merge",), 2),
    ]
    assert last.name is None
    assert last.pools[0].vertices == ("sort", "reduce")
    assert spec.edge_mappings["E5"].edge_type == "memory buffer or local file"
    assert spec.edge_mappings["E6"].endpoint == "intra-thread"
    assert str(reduce_pool.cardinality) == "1~∞"


def test_hadoop_2_spec_resolves_real_hadoop_3_stacks() -> None:
    # stacks seen in JFR samples of `phaseline engine run` (Hadoop 3.5, innermost first)
    spec = shipped_spec("hadoop-2")
    spill = ["org.apache.hadoop.util.QuickSort.sort", "org.apache.hadoop.mapred.MapTask$MapOutputBuffer.sortAndSpill",
             "org.apache.hadoop.mapred.MapTask$MapOutputBuffer$SpillThread.work",
             "org.apache.hadoop.util.concurrent.SubjectInheritingThread.run"]
    assert spec.resolve(spill, "SpillThread").vertex == "spill"
    merger = ["java.lang.Object.wait", "org.apache.hadoop.mapreduce.task.reduce.MergeThread.work",
              "org.apache.hadoop.util.concurrent.SubjectInheritingThread.run"]
    assert spec.resolve(merger, "InMemoryMerger - Thread to merge in-memory shuffled map-outputs").vertex == "inmem_merge"
    assert spec.resolve(merger, "OnDiskMerger - Thread to merge on-disk map-outputs").vertex == "ondisk_merge"
    final_merge = ["org.apache.hadoop.mapreduce.task.reduce.MergeManagerImpl.finalMerge",
                   "org.apache.hadoop.mapreduce.task.reduce.MergeManagerImpl.close",
                   "org.apache.hadoop.mapreduce.task.reduce.Shuffle.run", "org.apache.hadoop.mapred.ReduceTask.run"]
    assert spec.resolve(final_merge, "pool-5-thread-1").vertex == "sort"  # innermost location wins
    assert spec.resolve(final_merge[2:], "pool-5-thread-1").vertex == "shuffle"
    idle = ["jdk.internal.misc.Unsafe.park", "java.lang.Thread.run"]
    assert spec.resolve(idle, "process reaper").status is MatchStatus.UNMAPPED


def test_equally_deep_matches_are_ambiguous_not_guessed() -> None:
    spec = parse_spec(
        "Vertices {\n a: X.run\n b: X.run\n}\nVertex Mapping {\n Task Pool (T) (1) { Phase { Thread Pool (1) {a, b} } }\n}\n"
    )
    res = spec.resolve(["p.X.run"])
    assert res.status is MatchStatus.AMBIGUOUS
    assert res.candidates == ("a", "b")


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("Vertices {\n a: X.run\n}\nVertex Mapping {\n Task Pool (T) (1) { Phase { Thread Pool (1) {zz} } }\n}\n", 5, "unknown vertex"),
        ("Vertices {\n a: X.run\n}\nEdges {\n E1: a → nowhere\n}\n", 5, "unknown input/vertex/output"),
        ("Vertices {\n a X.run\n}\n", 2, "expected 'id: value'"),
        ("Vertices {\n a: X.run\n", 1, "not closed"),
        ("Vertices {\n a: X.run\n}\nVertex Mapping {\n Task Pool (T) (3~1) { }\n}\n", 5, "upper bound"),
        ("Vertices {\n a: X.run\n b: Y.run\n}\nVertex Mapping {\n Task Pool (T) (1) { Phase { Thread Pool (1) {a} } }\n}\n", 3, "in no thread pool"),
        ("Vertices {\n a: X.run\n}\nVertex Mapping {\n Task Pool (T) (1) { Phase {\n Thread Group Pool (g) (1) {a} } }\n}\n", 6, "group size"),
        # a frame pattern that is no regex: named here (it had been a re.error traceback at resolve time)
        ("Vertices {\n a: X.run\n b: MapTask.run(\n}\n", 3, "bad frame pattern 'MapTask.run('"),
    ],
)
def test_spec_errors_name_the_line(text: str, line: int, words: str) -> None:
    with pytest.raises(SpecError) as err:
        parse_spec(text, "t.spec")
    assert f"t.spec:{line}:" in str(err.value)
    assert words in str(err.value)


def test_a_spec_file_that_is_not_utf8_is_named_with_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "binary.spec"
    bad.write_bytes(b"Vertices {\n a: X.run\xff\n}\n")
    with pytest.raises(SpecError, match=r"binary\.spec:2: not a specification \(not UTF-8 text at byte 20: invalid start byte\)"):
        load_spec(bad)
