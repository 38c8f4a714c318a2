package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Reducer;

/**
 * Running totals by group (the shape of a window function, SUM() OVER (PARTITION BY ...)): every
 * record shuffled to its group with a number read from its bytes, and the reduce writes each record
 * again with its group's running sum so far.  Output as many records as the input, each shorter
 * than its line.
 *
 * <p>Usage: RunningTotal INPUT OUTPUT REDUCES
 */
public final class RunningTotal extends App {

  public RunningTotal() {
    super("runningtotal", Amount.class, null, Accumulate.class, Text.class, LongWritable.class);
  }

  /** (line) -> (group, the sum of the line's byte values). */
  public static final class Amount extends Shapes.GroupNumber {
    @Override
    protected long number(Text line) {
      byte[] b = line.getBytes();
      long sum = 0;
      for (int i = 0; i < line.getLength(); i++) {
        sum += b[i] & 0xFF;
      }
      return sum;
    }
  }

  /** (group, amounts) -> (group, running sum) for each amount, in the order they come. */
  public static final class Accumulate extends Reducer<Text, LongWritable, Text, LongWritable> {
    private final LongWritable total = new LongWritable();

    @Override
    protected void reduce(Text key, Iterable<LongWritable> values, Context ctx)
        throws IOException, InterruptedException {
      long running = 0;
      for (LongWritable v : values) {
        running += v.get();
        total.set(running);
        ctx.write(key, total);
      }
    }
  }
}
