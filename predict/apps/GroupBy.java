package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;

/**
 * Group-by with a CPU-heavy aggregate: every record is shuffled whole under its
 * group (the key's first two characters), and the reduce computes per group a
 * count, the distinct fillers and a rolling digest of every value.  No combiner:
 * the shuffle carries all the input.
 *
 * <p>Usage: GroupBy INPUT OUTPUT REDUCES
 */
public final class GroupBy extends App {

  public GroupBy() {
    super("groupby", ByGroup.class, null, Aggregate.class, Text.class, Text.class);
  }

  /** (line) -> (group, line). */
  public static final class ByGroup extends Mapper<Object, Text, Text, Text> {
    private final Text group = new Text();

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      groupOf(value, group);
      ctx.write(group, value);
    }
  }

  /** (group, lines) -> (group, "count fillers digest"). */
  public static final class Aggregate extends Shapes.Summary<Text> {
    @Override
    protected String summary(Iterable<Text> values) {
      long count = 0;
      int fillers = 0;
      long digest = 17;
      for (Text v : values) {
        byte[] b = v.getBytes();
        int n = v.getLength();
        for (int r = 0; r < 8; r++) {
          for (int i = 0; i < n; i++) {
            digest = digest * 31 + (b[i] ^ r);
          }
        }
        if (n > 44) {
          fillers |= 1 << ((b[44] - 'A') & 31);
        }
        count++;
      }
      return count + " " + Integer.bitCount(fillers) + " " + Long.toHexString(digest);
    }
  }
}
