package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Reducer;

/**
 * A skewed key: about 70 % of the records carry one hot key (the shape of a
 * null or default value in a join column), the rest spread over their first
 * three characters; every record is shuffled with its value, and one reduce
 * receives most of the data.
 *
 * <p>Usage: SkewedKey INPUT OUTPUT REDUCES
 */
public final class SkewedKey extends App {

  public SkewedKey() {
    super("skewkey", Skew.class, null, Tally.class, Text.class, Text.class);
  }

  /** (line) -> (hot key or key prefix, rest of the line). */
  public static final class Skew extends Mapper<Object, Text, Text, Text> {
    private static final byte[] HOT = "~hot~".getBytes();
    private final Text k = new Text();
    private final Text v = new Text();

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      byte[] b = value.getBytes();
      int n = value.getLength();
      if (n == 0) {
        return;
      }
      if ((b[0] & 0xff) % 10 < 7) {
        k.set(HOT);
      } else {
        k.set(b, 0, Math.min(3, n));
      }
      valueOf(value, v);
      ctx.write(k, v);
    }
  }

  /** (key, values) -> (key, count and total value length). */
  public static final class Tally extends Reducer<Text, Text, Text, Text> {
    private final Text out = new Text();

    @Override
    protected void reduce(Text key, Iterable<Text> values, Context ctx) throws IOException, InterruptedException {
      long count = 0;
      long bytes = 0;
      for (Text v : values) {
        count++;
        bytes += v.getLength();
      }
      out.set(count + " " + bytes);
      ctx.write(key, out);
    }
  }
}
