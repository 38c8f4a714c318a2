"""The typed ``.jhist`` path (msgspec, :mod:`ingest.jhist_typed`) reads exactly as the orjson path.

Every real ``.jhist`` fixture, and seeded mutations of each (the fuzz
harness's own :func:`tests.mutations.mutate`), are read twice: with the typed
path and with every line decoded by orjson (``typed=False``).  The rows, the
skipped lines, the notes, the unknown events and the error at the end must
be the same.  A few hand-made lines show which shapes go which way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_type_hints

import orjson
import pytest

from ingest.base import ReadContext, iter_rows
from ingest.counters_map import EVENT_SPECS
from ingest.jhist import _JhistReader
from ingest.jhist_typed import TYPED_EVENTS, JhCounters, decode_typed
from phaseline.errors import PhaselineError
from phaseline.hadoop_names import HistoryEventKind
from tests.conftest import FIXTURES
from tests.mutations import mutate

#: Mutated copies of each fixture compared (the default fuzz run does 500 cases over all fixtures).
MUTATIONS_PER_FIXTURE = 12
_JH = "org.apache.hadoop.mapreduce.jobhistory."


def _jhist_fixtures() -> list[Path]:
    return sorted(p for p in FIXTURES.rglob("*.jhist*") if p.is_file())


def read_both_ways(path: Path) -> tuple[Any, Any]:
    """(typed, orjson-only) readings: rows as dicts, skipped errors, notes, unknown, events, final error."""

    def read(typed: bool) -> Any:
        ctx = ReadContext(path)
        rows: list[tuple[str, dict[str, Any]]] = []
        error = None
        try:
            rows.extend((r.table, r.as_dict()) for r in iter_rows(_JhistReader(path, ctx, typed=typed).run()))
        except PhaselineError as exc:
            error = (type(exc).__name__, str(exc))
        skipped = [str(e) for e in ctx.skipped]
        return rows, skipped, ctx.notes, dict(ctx.unknown), ctx.events_read, error

    return read(True), read(False)


def _counters_of(rows: list[tuple[str, dict[str, Any]]]) -> int:
    return sum(1 for table, _ in rows if table == "counters")


@pytest.mark.parametrize("path", _jhist_fixtures(), ids=lambda p: p.name)
def test_fixture_reads_the_same_both_ways(path: Path) -> None:
    typed, plain = read_both_ways(path)
    assert typed == plain
    assert typed[4] > 0, "no events read"


@pytest.mark.parametrize("path", _jhist_fixtures(), ids=lambda p: p.name)
def test_mutated_fixture_reads_the_same_both_ways(path: Path, tmp_path: Path) -> None:
    data = path.read_bytes()
    for seed in range(MUTATIONS_PER_FIXTURE):
        mutated, how = mutate(data, seed)
        target = tmp_path / f"{seed}-{path.name}"
        target.write_bytes(mutated)
        typed, plain = read_both_ways(target)
        assert typed == plain, f"seed {seed} ({how})"


def _line(etype: str, record: str, payload: str) -> bytes:
    return f'{{"type":"{etype}","event":{{"{_JH}{record}":{payload}}}}}'.encode()


_COUNTERS = '{"name":"C","groups":[{"name":"g","displayName":"G","counts":[{"name":"n","displayName":"N","value":7}]}]}'


def test_typed_line_keeps_only_the_fields_read_and_counters_as_structs() -> None:
    text = _line(
        "MAP_ATTEMPT_FINISHED", "MapAttemptFinished",
        '{"taskid":"task_1_0001_m_000000","attemptId":"attempt_1_0001_m_000000_0","mapFinishTime":3,'
        f'"finishTime":4,"hostname":"/r/h","port":5,"clockSplits":[1,2],"counters":{_COUNTERS}}}',
    )  # fmt: skip
    decoded = decode_typed(text)
    assert decoded is not None
    etype, record, payload, payload_json = decoded
    assert (etype, record, payload_json) == ("MAP_ATTEMPT_FINISHED", _JH + "MapAttemptFinished", text)  # the line as it was read
    assert set(payload) == {"taskid", "attemptId", "mapFinishTime", "finishTime", "hostname", "counters"}
    assert "shuffleFinishTime" not in payload  # absent stays absent (the handler asks)
    counters = payload["counters"]
    assert isinstance(counters, JhCounters)
    assert counters.columns() == (["g"], [1], ["n"], [7])


@pytest.mark.parametrize(
    ("why", "text"),
    [
        ("a float for a long", _line("TASK_STARTED", "TaskStarted", '{"taskid":"t","startTime":5.0}')),
        ("a wrapped long", _line("TASK_STARTED", "TaskStarted", '{"taskid":"t","startTime":{"long":5}}')),
        ("past 64 bits", _line("TASK_STARTED", "TaskStarted", '{"taskid":"t","startTime":9223372036854775808}')),
        ("an int for a string", _line("TASK_STARTED", "TaskStarted", '{"taskid":7}')),
        ("another record name", _line("TASK_STARTED", "Other", '{"taskid":"t"}')),
        ("two records", b'{"type":"TASK_STARTED","event":{"' + _JH.encode() + b'TaskStarted":{},"x":{}}}'),
        ("a second type key", _line("TASK_STARTED", "TaskStarted", "{}")[:-1] + b',"type":"TASK_UPDATED"}'),
        ("a counter without a value", _line("TASK_FINISHED", "TaskFinished",
                                            '{"counters":{"groups":[{"name":"g","counts":[{"name":"n"}]}]}}')),
        ("counters in a union", _line("TASK_FINISHED", "TaskFinished",
                                      '{"counters":{"' + _JH + 'JhCounters":' + _COUNTERS + "}}")),
        ("invalid UTF-8 in a field not read", _line("TASK_STARTED", "TaskStarted", '{"x":"\xff"}')
         .replace("\xff".encode(), b"\xff")),
        ("an event type not typed", _line("TASK_UPDATED", "TaskUpdated", '{"taskid":"t"}')),
    ],
)  # fmt: skip
def test_lines_the_typed_path_leaves_to_orjson(why: str, text: bytes) -> None:
    assert decode_typed(text) is None, why


def test_wrapped_string_is_left_for_the_schema_unwrap() -> None:
    decoded = decode_typed(_line("TASK_FINISHED", "TaskFinished", '{"successfulAttemptId":{"string":"a"}}'))
    assert decoded is not None
    assert decoded[2] == {"successfulAttemptId": {"string": "a"}}  # as orjson gives it; the reader unwraps it


@pytest.mark.parametrize(
    ("why", "text"),
    [
        ("an escaped type", _line("TASK\\u005fSTARTED", "TaskStarted", '{"taskid":"t"}')),
        ("a leading space", b" " + _line("TASK_STARTED", "TaskStarted", '{"taskid":"t"}')),
        ("type after event", b'{"event":{"' + _JH.encode() + b'TaskStarted":{"taskid":"t"}},"type":"TASK_STARTED"}'),
        ("the same type twice", _line("TASK_STARTED", "TaskStarted", '{"taskid":"t"}')[:-1] + b',"type":"TASK_STARTED"}'),
    ],
)  # fmt: skip
def test_type_is_read_wherever_it_stands_as_orjson_reads_it(why: str, text: bytes) -> None:
    # ``type`` is the tag of one decoder's union: read as orjson reads it, where it stands
    decoded = decode_typed(text)
    assert decoded is not None, why
    ev = orjson.loads(text)
    ((record, payload),) = ev["event"].items()
    assert decoded == (ev["type"], record, payload, text)


def test_every_typed_event_type_has_a_handler_and_decodes_its_time_field() -> None:
    # the reader applies a typed line by its class's plan: a handler, the time field read as decoded
    for etype, (record, payload) in TYPED_EVENTS.items():
        spec = EVENT_SPECS[etype]
        assert spec.kind is not HistoryEventKind.EVENT_ONLY, etype
        assert spec.record == record, etype
        assert spec.time_field is None or spec.time_field in get_type_hints(payload), etype
