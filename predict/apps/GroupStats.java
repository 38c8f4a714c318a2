package phaseline.apps;

import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;

/**
 * Per-group statistics of record lengths (the shape of a GROUP BY with MIN, MAX, COUNT and SUM and no
 * partial aggregation): every record shuffled to its group ({@link App#groupOf}) with its length, and
 * the reduce writes one line a group, "min max count sum".  A shuffle of small values, every record's.
 *
 * <p>Usage: GroupStats INPUT OUTPUT REDUCES
 */
public final class GroupStats extends App {

  public GroupStats() {
    super("groupstats", Length.class, null, Stats.class, Text.class, Text.class, LongWritable.class);
  }

  /** (line) -> (group, the line's length in bytes). */
  public static final class Length extends Shapes.GroupNumber {
    @Override
    protected long number(Text line) {
      return line.getLength();
    }
  }

  /** (group, lengths) -> (group, "min max count sum"). */
  public static final class Stats extends Shapes.Summary<LongWritable> {
    @Override
    protected String summary(Iterable<LongWritable> values) {
      long min = Long.MAX_VALUE;
      long max = Long.MIN_VALUE;
      long count = 0;
      long sum = 0;
      for (LongWritable v : values) {
        long x = v.get();
        min = Math.min(min, x);
        max = Math.max(max, x);
        count++;
        sum += x;
      }
      return min + " " + max + " " + count + " " + sum;
    }
  }
}
