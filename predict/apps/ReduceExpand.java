package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Reducer;

/**
 * An expanding reduce: every record is shuffled as it is (the sort application's map,
 * {@link Sort.Split}), and the reduce writes each value three times, under its key with a
 * suffix 0, 1, 2 (the shape of a reduce-side fan-out: a join's cross product, a denormalisation),
 * so the job writes about three times its input, all of it in the reduces.  No combiner.
 *
 * <p>Usage: ReduceExpand INPUT OUTPUT REDUCES
 */
public final class ReduceExpand extends App {

  /** Records written per record read. */
  static final int FAN_OUT = 3;

  public ReduceExpand() {
    super("reduceexpand", Sort.Split.class, null, FanOut.class, Text.class, Text.class);
  }

  /** (key, values) -> (key + i, value) for i below {@link #FAN_OUT}, for every value. */
  public static final class FanOut extends Reducer<Text, Text, Text, Text> {
    private final Text out = new Text();

    @Override
    protected void reduce(Text key, Iterable<Text> values, Context ctx) throws IOException, InterruptedException {
      String k = key.toString();
      for (Text v : values) {
        for (int i = 0; i < FAN_OUT; i++) {
          out.set(k + i);
          ctx.write(out, v);
        }
      }
    }
  }
}
