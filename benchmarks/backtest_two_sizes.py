"""Profiled at one size or at two: the local suite's largest case predicted both ways.

``phaseline backtest`` profiles each job once, at its smallest case (the promise
"profile once").  A user who has runs at two sizes can merge them
(``phaseline profile JOB_A JOB_B``, :func:`profiles.merge_runs.merge_profiles`),
and the merge fits fixed and proportional cost across the sizes: the map
stage's total work and the reduce function's span
(:mod:`profiles.task_costs`).  This script measures what that buys on a suite
already run (``phaseline backtest --suite local --out DIR``): for every
application and map slot count, the median runs of the two smallest cases
(8 and 24 MiB in the full suite) profile the job, and the largest case
(64 MiB) is predicted on the same slots by every model, against the profile
of the smallest case alone.

Ablations show what each fit adds: the merge with neither fit (the runs'
one-time terms and per-record costs averaged, as for runs of one size), with
one of them, and with both (the product).  Figures are printed per set,
held-out first.

    python benchmarks/backtest_two_sizes.py SUITE_DIR [--set held-out|tuning|both] [--yarn 2,2,512]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import warnings
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import profiles.merge_runs as merge_runs  # noqa: E402  (after the path is set)
from phaseline.store import Store  # noqa: E402
from platform_model.model import PlatformModel  # noqa: E402
from predict import core  # noqa: E402
from predict.backtest import case_profile  # noqa: E402
from predict.backtest_runs import Run, group_cases, load_runs  # noqa: E402
from predict.core import Cluster, Dataset, JobSettings  # noqa: E402
from predict.suite import app_set  # noqa: E402

#: The merge's fits, by the name an ablation leaves out: left out, the fit finds no line, as over
#: runs of one size (the merge then averages the runs' one-time terms and per-record costs).
_FITS = {"map": "fit_map_work", "reduce": "fit_reduce_work"}
#: The profiles compared: label -> the fits the merge keeps (None: the smallest case alone).
VARIANTS: dict[str, tuple[str, ...] | None] = {
    "smallest size alone": None,
    "two sizes, no fit": (),
    "two sizes, map fit only": ("map",),
    "two sizes, reduce fit only": ("reduce",),
    "two sizes, both fits (the product)": ("map", "reduce"),
}


@contextmanager
def _fits_kept(kept: tuple[str, ...]) -> Iterator[None]:
    """The merge with only the ``kept`` fits: the others find no line, then are restored."""
    saved = {name: getattr(merge_runs, attr) for name, attr in _FITS.items()}
    try:
        for name, attr in _FITS.items():
            if name not in kept:
                setattr(merge_runs, attr, lambda *_args: None)
        yield
    finally:
        for name, attr in _FITS.items():
            setattr(merge_runs, attr, saved[name])


def _errors(
    suite_dir: Path, which: str, cluster: Cluster | None = None
) -> tuple[dict[str, dict[str, list[float]]], list[str]]:
    """|error| per variant and model over the set's (job, slots) cases, and one line per case; on
    ``cluster`` where given (a YARN suite's: :func:`predict.backtest_suite.loopback_cluster`), as
    ``phaseline backtest`` predicts it."""
    con = Store(suite_dir / "store").connect()
    platform = PlatformModel.load(suite_dir / "platform.json")
    by_name: dict[str, list[Run]] = defaultdict(list)
    for run in load_runs(con, skipped=[]):
        by_name[run.name].append(run)
    errors: dict[str, dict[str, list[float]]] = {v: defaultdict(list) for v in VARIANTS}
    lines = []
    for name, runs in sorted(by_name.items()):
        if app_set(name) != which:
            continue
        for slots in sorted({r.map_slots for r in runs}):
            cases = [c for c in group_cases(runs) if c[0].map_slots == slots]
            if len(cases) < 3:
                continue
            small, second = (case_profile(con, name, c) for c in cases[:2])
            if small is None or second is None:
                continue
            target = cases[-1]
            measured = statistics.median(r.span_ms / 1000 for r in target)
            first = target[0]
            settings = JobSettings.from_config(
                small.source.config, reduces=first.reduces, **({"slowstart": 1.0} if first.local else {})
            )
            where = cluster or Cluster(1, first.map_slots, first.reduce_slots)
            dataset = Dataset(input_bytes=first.input_bytes, splits=first.maps)
            shown = []
            for label, kept in VARIANTS.items():
                profile = small
                if kept is not None:
                    with _fits_kept(kept):
                        profile = merge_runs.merge_profiles([small, second])
                for model in core.models():
                    pred = core.get(model).predict(profile, platform, where, dataset, settings).seconds
                    errors[label][model].append(abs(pred / measured - 1))
                    if model == "herodotou":
                        shown.append(f"{pred / measured - 1:+.0%}")
            lines.append(f"  {name} on {slots} slot(s), measured {measured:.2f} s; herodotou: " + " / ".join(shown))
    return errors, lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite_dir", type=Path)
    parser.add_argument("--set", choices=("held-out", "tuning", "both"), default="both")
    parser.add_argument("--yarn", metavar="NODES,CONTAINERS,MB",
                        help="a YARN suite's cluster shape (e.g. 2,2,512), as `backtest --suite --engine yarn` ran it")  # fmt: skip
    args = parser.parse_args(argv)
    cluster = None
    if args.yarn:
        from platform_model.engine.yarn import ClusterShape
        from predict.backtest_suite import loopback_cluster

        cluster = loopback_cluster(ClusterShape(*(int(v) for v in args.yarn.split(","))))
    sets = ("held-out", "tuning") if args.set == "both" else (args.set,)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for which in sets:
            errors, lines = _errors(args.suite_dir, which, cluster)
            cases = len(lines)
            print(f"== {which}: the largest case predicted, {cases} (application, slots) cases")
            print("\n".join(lines))
            for label, per_model in errors.items():
                print(f"  {label}")
                for model, errs in per_model.items():
                    print(f"    {model:16s} median {statistics.median(errs):6.1%}  worst {max(errs):6.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
