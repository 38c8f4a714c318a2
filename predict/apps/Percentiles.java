package phaseline.apps;

import java.io.IOException;
import java.util.Arrays;

import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;

/**
 * A reduce-heavy job: the map emits each record's number (its low 12 hex digits)
 * under the key's first character; the reduce holds a group's values in memory,
 * sorts them, and reports their count, 50th, 90th and 99th percentiles and a
 * digest mixed over every value (the shape of per-key statistics whose work is
 * in the reduce, not the map).
 *
 * <p>Usage: Percentiles INPUT OUTPUT REDUCES
 */
public final class Percentiles extends App {

  public Percentiles() {
    // the reduce's output is text, the map's numbers
    super("percentiles", Numbers.class, null, Summary.class, Text.class, Text.class, LongWritable.class);
  }

  /** (line) -> (key's first character, record number mod 16^12). */
  public static final class Numbers extends Mapper<Object, Text, Text, LongWritable> {
    private final Text group = new Text();
    private final LongWritable number = new LongWritable();

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      byte[] b = value.getBytes();
      int n = value.getLength();
      if (n < 43) {
        return;
      }
      long x = 0;
      for (int i = 31; i < 43; i++) {
        int c = b[i];
        x = (x << 4) | (c <= '9' ? c - '0' : c - 'A' + 10);
      }
      group.set(b, 0, 1);
      number.set(x);
      ctx.write(group, number);
    }
  }

  /** (group, numbers) -> (group, "count p50 p90 p99 digest"). */
  public static final class Summary extends Shapes.Summary<LongWritable> {
    private long[] held = new long[1024];

    @Override
    protected String summary(Iterable<LongWritable> values) {
      int n = 0;
      for (LongWritable v : values) {
        if (n == held.length) {
          held = Arrays.copyOf(held, 2 * n);
        }
        held[n++] = v.get();
      }
      Arrays.sort(held, 0, n);
      long digest = 17;
      for (int i = 0; i < n; i++) {
        long x = held[i];
        for (int r = 0; r < 16; r++) {
          x ^= x >>> 33;
          x *= 0xff51afd7ed558ccdL;
        }
        digest = digest * 31 + x;
      }
      return n + " " + held[n / 2] + " " + held[(int) (n * 0.9)] + " " + held[(int) (n * 0.99)] + " "
          + Long.toHexString(digest);
    }
  }
}
