package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Reducer;

/**
 * A CPU-heavy reduce: every record is shuffled as it is (the sort application's map, {@link Sort.Split}),
 * and the reduce scores each value through rounds of a 64-bit mix (the shape of a per-group model fit
 * or a similarity computed where the group meets), writing one (key, score) per key: the reduce
 * function dominates, the output is small.  {@code -D phaseline.cpu.rounds=N} sets the rounds
 * (default 16).  No combiner.
 *
 * <p>Usage: ReduceCpu INPUT OUTPUT REDUCES
 */
public final class ReduceCpu extends App {

  public ReduceCpu() {
    // the map output's values are the records' text; the reduce's, their scores
    super("reducecpu", Sort.Split.class, null, Score.class, Text.class, LongWritable.class, Text.class);
  }

  /** (key, values) -> (key, the values' mixed score). */
  public static final class Score extends Reducer<Text, Text, Text, LongWritable> {
    private final LongWritable score = new LongWritable();
    private int rounds;

    @Override
    protected void setup(Context ctx) {
      rounds = ctx.getConfiguration().getInt(CPU_ROUNDS, 16);
    }

    @Override
    protected void reduce(Text key, Iterable<Text> values, Context ctx) throws IOException, InterruptedException {
      long h = 0x9E3779B97F4A7C15L;
      for (Text v : values) {
        h = mix(h, v.getBytes(), v.getLength(), rounds);
      }
      score.set(h);
      ctx.write(key, score);
    }
  }
}
