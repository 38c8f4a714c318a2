import sys, time
from pathlib import Path
from collections import defaultdict
from ingest import jhist, jhist_columnar
from ingest.base import ReadContext, iter_rows

def read(path, columnar):
    jhist.COLUMNAR_MIN_BYTES = 0 if columnar else 1 << 62
    ctx = ReadContext(path)
    tables = defaultdict(list); err = None
    try:
        for row in iter_rows(jhist.read_jhist(path, ctx)):
            d = row.as_dict(); tables[row.table].append(tuple(sorted((k, v) for k, v in d.items() if v is not None)))
    except Exception as exc:
        err = (type(exc).__name__, str(exc))
    return {k: sorted(v, key=repr) for k, v in tables.items()}, err, (ctx.events_read, dict(ctx.unknown), list(ctx.notes))

def compare(path):
    t = time.perf_counter(); a = read(path, False); ta = time.perf_counter() - t
    t = time.perf_counter(); b = read(path, True); tb = time.perf_counter() - t
    declined = jhist_columnar.last_decline
    same = a == b
    print(f"{path.name[:60]:60s} same={same} declined={declined!r:.80} py={ta:.2f}s col={tb:.2f}s")
    if not same:
        for k in set(a[0]) | set(b[0]):
            if a[0].get(k) != b[0].get(k):
                x, y = a[0].get(k, []), b[0].get(k, [])
                print("  table", k, len(x), len(y))
                for r1, r2 in zip(x, y):
                    if r1 != r2:
                        print("   py ", r1); print("   col", r2); break
        if a[1:] != b[1:]: print("  err/ctx", a[1:], b[1:])
    return same

if __name__ == "__main__":
    ok = all([compare(Path(p)) for p in sys.argv[1:]])
    print("ALL SAME" if ok else "DIFFERENT")
