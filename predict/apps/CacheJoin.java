package phaseline.apps;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.lib.reduce.LongSumReducer;

/**
 * A map-side join against a side table shipped in the distributed cache: the driver writes a table of
 * {@value #ENTRIES} (key prefix, label) lines to its scratch space and adds it to the job's cache files;
 * every map reads the whole table into memory in its set-up, then joins each record by its key's first
 * three characters and counts the records per label (a combiner, and the reduce: {@link LongSumReducer}).
 * The shape of a fact table joined with a small dimension table, Hive's map join.
 *
 * <p>Usage: CacheJoin INPUT OUTPUT REDUCES
 */
public final class CacheJoin extends App {

  /** Lines of the side table. */
  static final int ENTRIES = 200_000;
  /** Labels the table maps prefixes to. */
  static final int LABELS = 40;

  public CacheJoin() {
    super("cachejoin", Join.class, LongSumReducer.class, LongSumReducer.class, Text.class, LongWritable.class);
  }

  @Override
  protected void configure(Job job, String[] args) throws Exception {
    super.configure(job, args);
    // in the job's scratch space (hadoop.tmp.dir), not beside its output: nothing a run leaves but its traces
    Path side = new Path(job.getConfiguration().get("hadoop.tmp.dir"), "phaseline-side/table.txt");
    FileSystem fs = side.getFileSystem(job.getConfiguration());
    SplittableRandom rnd = new SplittableRandom(7);
    try (PrintWriter out = new PrintWriter(fs.create(side, true), false, StandardCharsets.UTF_8)) {
      for (int i = 0; i < ENTRIES; i++) {
        // three printable characters, as the input's keys begin, and a serial so most lines are unique
        StringBuilder key = new StringBuilder();
        for (int j = 0; j < 3; j++) {
          key.append((char) (' ' + rnd.nextInt(95)));
        }
        out.append(key).append(i < 95 * 95 * 95 ? "" : Integer.toString(i)).append('\t')
            .append("label").append(Integer.toString(rnd.nextInt(LABELS))).append('\n');
      }
    }
    job.addCacheFile(fs.makeQualified(side).toUri());
  }

  /** Reads the cached table in set-up; (line) -> (its prefix's label, 1). */
  public static final class Join extends Shapes.Counts {
    private final Map<String, String> table = new HashMap<>();

    @Override
    protected void setup(Context ctx) throws IOException {
      for (URI uri : ctx.getCacheFiles()) {
        Path path = new Path(uri);
        FileSystem fs = path.getFileSystem(ctx.getConfiguration());
        try (BufferedReader in = new BufferedReader(new InputStreamReader(fs.open(path), StandardCharsets.UTF_8))) {
          String line;
          while ((line = in.readLine()) != null) {
            int tab = line.indexOf('\t');
            table.put(line.substring(0, tab), line.substring(tab + 1));
          }
        }
      }
    }

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      String line = value.toString();
      String found = table.get(line.substring(0, Math.min(3, line.length())));
      count(found == null ? "unmatched" : found, ctx);
    }
  }
}
