"""How every command prints: tables that a pipe does not fold, and warnings on stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import click
import numpy as np
import pytest
from click.testing import CliRunner

from phaseline.cli.output import emit, handle_errors
from phaseline.errors import ConvergenceWarning, ExtrapolationWarning
from tests.conftest import REPO


def test_a_piped_table_is_as_wide_as_it_needs() -> None:
    # CliRunner's stdout is not a terminal, like `phaseline backtest --summary | less`: rich would
    # assume 80 columns and fold both the header and the values.
    row = {"model": "critical_path", "cases": 20, "median_abs_error": "8.5%", "worst_abs_error": "30.4%",
           "coverage": "-", "within_runs": "60.0%", "median_spread": "21.4%"}  # fmt: skip

    @click.command()
    def show() -> None:
        emit([row], "table")

    out = CliRunner().invoke(show, []).stdout
    lines = out.splitlines()
    assert len(lines) == 5  # top rule, header, rule, one row, bottom rule
    assert all(name in lines[1] for name in row)
    assert "critical_path" in lines[3]
    assert len(lines[1]) > 80


def test_lists_and_structs_print_as_json_in_tables_and_csv() -> None:
    # `phaseline query "select [1.0, 'nan'::double] c, {'x': '-inf'::double} d" --format csv` had printed
    # Python's repr ([1.0, None], {'x': None}), where --format json gives [1.0, null] and {"x": null}.
    row = {"c": [1.0, float("nan")], "d": {"x": float("-inf"), "y": "é"}, "e": None}

    @click.command()
    @click.argument("fmt")
    def show(fmt: str) -> None:
        emit([row], fmt)

    csv_out = CliRunner().invoke(show, ["csv"]).stdout
    assert csv_out == 'c,d,e\n"[1.0, null]","{""x"": null, ""y"": ""é""}",\n'
    table = CliRunner().invoke(show, ["table"]).stdout
    assert "[1.0, null]" in table
    assert '{"x": null, "y": "é"}' in table
    assert "None" not in table


def test_phaselines_warnings_become_one_stderr_line_each_and_the_command_goes_on() -> None:
    # Every command is wrapped by handle_errors: a ConvergenceWarning from a fit (CI once failed a
    # `phaseline fit --report` on one) qualifies the result on stderr instead of crashing the command.
    @click.command()
    @handle_errors
    def noisy() -> None:
        for _ in range(3):
            warnings.warn(ConvergenceWarning("phase 'shuffle': robust fit stopped after 50 iterations"), stacklevel=1)
        warnings.warn(ExtrapolationWarning("phase 'read': outside the fitted range"), stacklevel=1)
        click.echo("result")

    res = CliRunner().invoke(noisy, [])
    assert res.exit_code == 0, res.output
    assert res.stdout == "result\n"
    assert res.stderr.splitlines() == [
        "warning: phase 'shuffle': robust fit stopped after 50 iterations",
        "warning: phase 'read': outside the fitted range",
    ]


def test_a_submodels_extrapolations_are_one_line_per_phase() -> None:
    # A prediction asks one submodel at every task's size: `predict --input-bytes 1G` on the sample had
    # printed four collect lines for sizes 1,283,130 to 1,285,614 bytes, each outside the same range.
    from platform_model.model import fit_platform
    from platform_model.profile import profile_from_arrays

    # collect fitted on 7 to 20 MB, write on 3 to 60 MB (eight runs each, 10 ms a MB)
    sizes = {"collect": np.linspace(7e6, 2e7, 16), "write": np.linspace(3e6, 6e7, 16)}
    phases = [ph for ph, xs in sizes.items() for _ in xs]
    data = [float(x) for xs in sizes.values() for x in xs]
    model = fit_platform(profile_from_arrays(phases, data, [5 + x / 1e5 for x in data],
                                             [f"run{i % 8}" for i in range(len(data))]))  # fmt: skip

    @click.command()
    @handle_errors
    def predicting() -> None:
        for size in (1_285_614, 1_283_130, 1_285_582, 1_283_130.4):
            model.duration_ms("collect", size)
        model.duration_ms("write", 1e8)
        model.duration_ms("collect", 9e6)  # inside: no warning
        click.echo("result")

    res = CliRunner().invoke(predicting, [])
    assert res.exit_code == 0, res.output
    assert res.stderr.splitlines() == [
        "warning: phase 'collect': 3 sizes from 1283130 to 1285614 bytes are outside the fitted range "
        "[7000000, 20000000] bytes; the prediction extrapolates",
        "warning: phase 'write': 100000000 bytes is outside the fitted range [3000000, 60000000] bytes; "
        "the prediction extrapolates",
    ]


def test_other_libraries_warnings_show_once_and_the_command_ends() -> None:
    # A numpy overflow (a RuntimeWarning, not phaseline's) used to be re-shown into the list being
    # reported, while it was still recorded: the command never returned.
    import numpy as np

    @click.command()
    @handle_errors
    def overflowing() -> None:
        with np.errstate(over="warn"):
            np.float64(1e300) * np.float64(1e300)
        warnings.warn(ExtrapolationWarning("phase 'read': outside the fitted range"), stacklevel=1)
        click.echo("result")

    with pytest.warns(RuntimeWarning, match="overflow encountered") as shown:
        res = CliRunner().invoke(overflowing, [])
    assert res.exit_code == 0, res.output
    assert res.stdout == "result\n"
    assert res.stderr == "warning: phase 'read': outside the fitted range\n"
    assert len(shown) == 1


def test_the_system_refusing_an_output_path_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    # Only four OSErrors were caught: a name past the file system's limit (ENAMETOOLONG) or a full
    # disk (ENOSPC) ended `report --out`, `timeline --out`, `ingest --store` in a traceback.
    from phaseline.cli import main

    conf = tmp_path / "job_1_0001_conf.xml"
    conf.write_text("<configuration><property><name>a</name><value>1</value></property></configuration>")
    res = CliRunner().invoke(main, ["ingest", str(conf), "--store", str(tmp_path / ("s" * 300))])
    assert res.exit_code == 1
    assert isinstance(res.exception, SystemExit)
    assert "Error: File name too long: " in res.stderr

    @click.command()
    @handle_errors
    def full_disk() -> None:
        raise OSError(28, "No space left on device", "/dev/full")

    res = CliRunner().invoke(full_disk, [])
    assert (res.exit_code, res.stderr) == (1, "Error: No space left on device: /dev/full\n")

    @click.command()
    @handle_errors
    def no_errno() -> None:
        raise OSError("a library's own OSError, without errno")

    res = CliRunner().invoke(no_errno, [])
    assert isinstance(res.exception, OSError)  # not the user's path: a bug stays a traceback


def test_a_bad_query_names_duckdbs_error_and_the_spot(tmp_path: Path) -> None:
    from phaseline.cli import main

    conf = tmp_path / "job_1_0001_conf.xml"
    conf.write_text("<configuration><property><name>a</name><value>1</value></property></configuration>")
    store = str(tmp_path / "s")
    assert CliRunner().invoke(main, ["ingest", str(conf), "--store", store]).exit_code == 0
    result = CliRunner().invoke(main, ["query", "selec 1", "--store", store])
    assert result.exit_code == 1, result.output
    assert "query failed: Parser Error" in result.output
    assert "LINE 1: selec 1" in result.output  # the whole message, caret included


def test_a_query_of_several_statements_says_whose_rows_it_prints(tmp_path: Path) -> None:
    from phaseline.cli import main

    conf = tmp_path / "job_1_0001_conf.xml"
    conf.write_text("<configuration><property><name>a</name><value>1</value></property></configuration>")
    store = str(tmp_path / "s")
    assert CliRunner().invoke(main, ["ingest", str(conf), "--store", store]).exit_code == 0
    result = CliRunner().invoke(main, ["query", "select 1 AS a; select 2 AS b", "--store", store, "--format", "csv"])
    assert result.exit_code == 0, result.output
    assert result.stdout == "b\n2\n"
    assert result.stderr == "warning: 2 statements ran; the rows are the last one's\n"
    one = CliRunner().invoke(main, ["query", "select 1 AS a;", "--store", store, "--format", "csv"])
    assert (one.stdout, one.stderr) == ("a\n1\n", "")
    # a last statement without rows: run as one script, the first statement's rows had been printed
    ddl = CliRunner().invoke(main, ["query", "select 1 AS a; create temp table t(x int)", "--store", store,
                                    "--format", "json"])  # fmt: skip
    assert ddl.exit_code == 0, ddl.output
    assert "\"a\"" not in ddl.stdout


def test_a_query_that_would_write_files_is_refused(tmp_path: Path) -> None:
    # `phaseline query "COPY (SELECT 1) TO 'STORE/MANIFEST.json'"` had overwritten the manifest:
    # the store was gone, and the command had said nothing but "Count 1".
    from phaseline.cli import main

    conf = tmp_path / "job_1_0001_conf.xml"
    conf.write_text("<configuration><property><name>a</name><value>1</value></property></configuration>")
    store = tmp_path / "s"
    assert CliRunner().invoke(main, ["ingest", str(conf), "--store", str(store)]).exit_code == 0
    manifest = (store / "MANIFEST.json").read_bytes()
    for sql in (
        f"COPY (SELECT 1 AS x) TO '{store / 'MANIFEST.json'}' (FORMAT csv)",
        f"select 1; COPY (SELECT 1 AS x) TO '{tmp_path / 'x.csv'}'",
        f"ATTACH '{tmp_path / 'x.db'}' AS x",
        "INSTALL httpfs",
        f"EXPORT DATABASE '{tmp_path / 'dump'}'",
    ):
        result = CliRunner().invoke(main, ["query", sql, "--store", str(store)])
        assert result.exit_code == 2, (sql, result.output)
        assert "is refused" in result.output
    assert (store / "MANIFEST.json").read_bytes() == manifest
    assert sorted(p.name for p in tmp_path.iterdir()) == ["job_1_0001_conf.xml", "s"]
    # what touches only the query's own in-memory database still runs
    ok = CliRunner().invoke(
        main, ["query", "create temp table t AS select 1 AS a; select a from t", "--store", str(store), "--format", "csv"]
    )
    assert ok.exit_code == 0, ok.output
    assert ok.stdout == "a\n1\n"


def test_a_query_whose_columns_share_a_name_keeps_every_column(tmp_path: Path) -> None:
    # A join's `status` of jobs and attempts: the rows were built by name, so the second value
    # was printed in both columns (csv) or the first column was lost (json).
    from phaseline.cli import main

    conf = tmp_path / "job_1_0001_conf.xml"
    conf.write_text("<configuration><property><name>a</name><value>1</value></property></configuration>")
    store = str(tmp_path / "s")
    assert CliRunner().invoke(main, ["ingest", str(conf), "--store", store]).exit_code == 0
    sql = "select 1 as a, 2 as a, 3 as a_1"
    csv_out = CliRunner().invoke(main, ["query", sql, "--store", store, "--format", "csv"])
    assert csv_out.exit_code == 0, csv_out.output
    assert csv_out.stdout == "a,a_2,a_1\n1,2,3\n"
    json_out = CliRunner().invoke(main, ["query", sql, "--store", store, "--format", "json"])
    assert json.loads(json_out.stdout) == [{"a": 1, "a_2": 2, "a_1": 3}]


def test_a_query_without_a_statement_is_a_usage_error_not_a_traceback(tmp_path: Path) -> None:
    from phaseline.cli import main

    conf = tmp_path / "job_1_0001_conf.xml"
    conf.write_text("<configuration><property><name>a</name><value>1</value></property></configuration>")
    store = str(tmp_path / "s")
    assert CliRunner().invoke(main, ["ingest", str(conf), "--store", store]).exit_code == 0
    for sql in ("", " ;", "\n"):
        result = CliRunner().invoke(main, ["query", sql, "--store", store])
        assert result.exit_code == 2, result.output
        assert "no statement in it" in result.output
        assert "Traceback" not in result.output
    comment = CliRunner().invoke(main, ["query", "/* nothing */", "--store", store, "--format", "json"])
    assert (comment.exit_code, comment.stdout.strip()) == (0, "[]")


def test_the_cli_gives_arrow_jemalloc_where_built_in_unless_told_otherwise() -> None:
    # mimalloc (pyarrow's default) kept freed pages, and the system allocator's arena of the Parquet
    # writer thread did too: a 500 MB ingest peaked 1.55-1.72x its 1 MB peak, with jemalloc 1.39-1.42x
    code = "import phaseline.cli, pyarrow as pa; print(pa.default_memory_pool().backend_name)"
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    built = subprocess.run([sys.executable, "-c", "import pyarrow as pa; print(pa.supported_memory_backends())"],
                           env=env, capture_output=True, text=True, check=True)  # fmt: skip
    chosen = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert chosen.stdout.strip() == ("jemalloc" if "jemalloc" in built.stdout else "system")
    assert chosen.stderr == ""  # (Arrow warns of a pool it was not built with)
    env["ARROW_DEFAULT_MEMORY_POOL"] = "mimalloc"
    kept = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert kept.stdout.strip() == "mimalloc"


def test_the_cli_reads_which_pools_arrow_was_built_with_without_importing_it() -> None:
    code = "import sys, phaseline.cli as c; print(c.arrow_pool(), 'pyarrow' in sys.modules)"
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    pool, imported = out.stdout.split()
    assert pool in ("jemalloc", "system")
    assert imported == "False"


@pytest.mark.parametrize("command", ["ingest", "analyze"])
def test_paths_without_any_file_are_said_on_stderr(tmp_path: Path, command: str) -> None:
    from phaseline.cli import main

    empty = tmp_path / "history-done"
    empty.mkdir()
    args = [command, str(empty), "--store", str(tmp_path / "store")]
    if command == "analyze":
        args += ["--out", str(tmp_path / "report")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert f"warning: no files under {empty}: nothing was ingested" in result.stderr
    args = [command, str(REPO / "sample_traces" / "README.md"), "--store", str(tmp_path / "s2")]
    if command == "analyze":
        args += ["--out", str(tmp_path / "report2")]
    with_file = CliRunner().invoke(main, args)
    assert "no files under" not in with_file.stderr


def _usage_cases(tmp: Path) -> list[tuple[list[str], str]]:
    """Wrong option values, each of which a CLI audit found answered with exit 1 (an error) or accepted."""
    dummy = tmp / "dummy.json"
    dummy.write_text("{}")
    demands = tmp / "d.csv"
    demands.write_text("task,cpu,disk\nmap,1,1\nshuffle_sort,0.1,0.1\nmerge,2,2\n")
    scenario = ["--profile", str(dummy), "--platform", str(dummy)]
    points = tmp / "pts.csv"
    points.write_text("phase,data_bytes,dur_ms\n" + "".join(f"read,{mb << 20},{10 + 3 * mb}\n" for mb in range(1, 9)))
    fit = ["fit", "--from-csv", str(points), "--out", str(tmp / "m.json")]
    mva = ["mva", "--demands", str(demands), "--nodes", "1", "--cpus", "1", "--disks", "1", "--maps", "2",
           "--reduces", "1", "--pm", "1", "--pr", "1", "--ps", "1"]  # fmt: skip
    return [
        (["bench", "plan", "--scale", "0", "--out", str(tmp / "p.json")], "--scale"),
        (["bench", "plan", "--scale", "nan", "--out", str(tmp / "p.json")], "not a finite number"),
        (["dataflow", "job_1_1", "--period-ms", "nan"], "not a finite number"),
        (["dataflow", "job_1_1", "--period-ms", "inf"], "not a finite number"),
        # below 1 ms (samples are timed in whole ms): 1e-300 overflowed the idle-sample count in SQL,
        # and the error blamed the store; 1e-9 made hundreds of billions of idle samples
        (["dataflow", "job_1_1", "--period-ms", "1e-300"], "not in the range x>=1.0"),
        (["dataflow", "job_1_1", "--period-ms", "0.5"], "not in the range x>=1.0"),
        (["hotspots", "job_1_1", "--top", "0"], "--top"),
        (["hotspots", "job_1_1", "--out", str(tmp / "x.txt")], "write FILE.png or FILE.svg"),
        (["dataflow-chart", "job_1_1", "--out", str(tmp / "x.txt")], "write FILE.png or FILE.svg"),
        (["whatif", *scenario, "--set", "io.sort.mb=256", "--model", "nosuch"], "no model 'nosuch'"),
        (["predict", *scenario, "--splits", "3", "--split-bytes", "1M"], "not both"),
        ([*mva, "--jobs", "3", "--simulate", "3"], "--simulate runs one job at a time"),
        (["engine", "run", "--out", str(tmp / "r"), "--input", str(tmp)], "--input is for a user's job"),
        # options that qualify another that is not given had been accepted and ignored
        ([*fit, "--plot-format", "svg"], "--plot-format only applies with --plot"),
        ([*fit, "--folds", "3"], "--folds only applies with --report"),
        (["hotspots", "job_1_1", "--by-host", "map", "--top", "1"], "--top only applies to the hotspots per vertex"),
        (["engine", "run", "--out", str(tmp / "r"), "-D", "foo"], "expects KEY=VALUE"),
        (["engine", "run", "--out", str(tmp / "r"), "--input-mb", "1e400"], "not a finite number"),
        (["engine", "run", "--out", str(tmp / "r"), "--warmup-mb", "inf"], "not a finite number"),
        (["engine", "run", "--out", str(tmp / "r"), "--timeout", "nan"], "not a finite number"),
    ]


def test_wrong_option_values_are_usage_errors(tmp_path: Path) -> None:
    from phaseline.cli import main

    for args, message in _usage_cases(tmp_path):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output, (args, result.output)
    assert not (tmp_path / "r").exists()


def test_platform_eval_of_a_phase_the_model_lacks_is_a_usage_error(tmp_path: Path) -> None:
    from phaseline.cli import main

    rows = [f"{phase},{mb << 20},{10 + 3 * mb},run{mb}" for phase in ("read", "spill") for mb in range(1, 9)]
    (tmp_path / "t.csv").write_text("phase,data_bytes,dur_ms,run_id\n" + "\n".join(rows) + "\n")
    model = tmp_path / "m.json"
    assert CliRunner().invoke(main, ["fit", "--from-csv", str(tmp_path / "t.csv"), "--out", str(model)]).exit_code == 0
    result = CliRunner().invoke(main, ["platform", "eval", str(model), "--phase", "bogus", "--bytes", "1M"])
    assert result.exit_code == 2, result.output
    assert "the model has no submodel 'bogus'" in result.output
    assert "it has: read, spill" in result.output
    unfitted = CliRunner().invoke(main, ["platform", "eval", str(model), "--phase", "write", "--bytes", "1M"])
    assert unfitted.exit_code == 2
    assert "'write' (no data" in unfitted.output


def test_a_model_named_twice_is_run_once() -> None:
    from phaseline.cli.predict import _model_names

    assert _model_names(None, None, ("bounds", "bounds,herodotou", "bounds")) == ("bounds", "herodotou")  # type: ignore[arg-type]


@pytest.mark.parametrize("value", ["inf", "nan", "1e300", "0.01"])
def test_a_file_timeout_out_of_range_is_a_usage_error(tmp_path: Path, value: str) -> None:
    # inf, nan and 1e300 passed click's FloatRange and reached the interval timer: every good
    # file was quarantined (OverflowError, "Invalid value NaN") and the ingest exited 3.
    from phaseline.cli import main

    conf = tmp_path / "job_1_0001_conf.xml"
    conf.write_text("<configuration><property><name>a</name><value>1</value></property></configuration>")
    res = CliRunner().invoke(main, ["ingest", str(conf), "--store", str(tmp_path / "s"), "--file-timeout", value])
    assert res.exit_code == 2, res.output
    assert "Invalid value for '--file-timeout'" in res.stderr
    assert not (tmp_path / "s").exists()


def test_an_ingest_whose_stderr_reader_left_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    # `phaseline ingest DIR 2>&1 | head -1`: the second file's line met a closed pipe, and the
    # BrokenPipeError ended the ingest before its first commit: nothing was stored.
    import io

    from phaseline.cli.ingest_cmds import _file_reporter

    class Closed(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stderr", Closed())
    with _file_reporter(3) as report:
        report("landed a.jhist")
        report("landed b.jhist")
        report(None)
