package phaseline.apps;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.lib.reduce.LongSumReducer;

/**
 * A large fixed per-task set-up: every map first builds a lookup table of
 * 300,000 entries ({@code -D phaseline.setup.entries}) -- the shape of a task
 * that loads a model or a side table before its first record -- then tags each
 * record with the table's category for its key prefix.  A combiner.
 *
 * <p>Usage: FixedSetup INPUT OUTPUT REDUCES
 */
public final class FixedSetup extends App {

  public FixedSetup() {
    super("fixedsetup", Lookup.class, LongSumReducer.class, LongSumReducer.class, Text.class, LongWritable.class);
  }

  /** Builds the table in setup; (line) -> (category, 1). */
  public static final class Lookup extends Shapes.Counts {
    private final Map<String, String> table = new HashMap<>();

    @Override
    protected void setup(Context ctx) {
      int entries = ctx.getConfiguration().getInt("phaseline.setup.entries", 300_000);
      SplittableRandom rnd = new SplittableRandom(42);
      char[] k = new char[3];
      for (int i = 0; i < entries; i++) {
        for (int j = 0; j < 3; j++) {
          k[j] = (char) (' ' + rnd.nextInt(95));
        }
        table.put(new String(k) + i, "c" + rnd.nextInt(64));
      }
      for (int i = 0; i < 95 * 95; i++) {
        k[0] = (char) (' ' + i / 95);
        k[1] = (char) (' ' + i % 95);
        table.put(new String(k, 0, 2), "c" + (i % 64));
      }
    }

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      String line = value.toString();
      String c = table.get(groupOf(line));
      count(c == null ? "none" : c, ctx);
    }
  }
}
