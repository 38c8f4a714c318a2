import time, sys
from pathlib import Path
from ingest import jhist, jhist_columnar as jc
from ingest.base import ReadContext, row_count
p = Path(sys.argv[1])
ctx = ReadContext(p); rd = jhist._JhistReader(p, ctx)
with open(p, "rb") as fh: ln, off = rd._header(fh)
c = jc._Columnar(p, rd.schema, ln, off, 1 << 26); con = c.con
T = time.perf_counter
t = T(); blocks = list(c._blocks()); print("split all", round(T() - t, 3), len(blocks))
t = T(); n = c.pass1(); print("pass1 total", round(T() - t, 3), n)
con.execute("SET enable_profiling = 'no_output'")
t = T(); k = 0
import collections
tab = collections.Counter()
last = T()
for item in c._rows():
    now = T(); tab[item.table] += now - last; last = now
print("rows total", round(T() - t, 3), {k: round(v, 3) for k, v in tab.items()})
