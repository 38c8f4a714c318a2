package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.io.NullWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;

/**
 * A map-only job that writes twice what it reads: every record as it is and
 * again with its key reversed (the shape of a denormalizing or index-building
 * pass whose cost is its output).  No reduce.  Run with REDUCES 0.
 *
 * <p>Usage: Explode INPUT OUTPUT REDUCES
 */
public final class Explode extends App {

  public Explode() {
    super("explode", Twice.class, null, null, Text.class, NullWritable.class);
  }

  /** (line) -> (line), (line with its key reversed). */
  public static final class Twice extends Mapper<Object, Text, Text, NullWritable> {
    private final Text mirrored = new Text();
    private byte[] buffer = new byte[0];

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      ctx.write(value, NullWritable.get());
      int n = value.getLength();
      if (buffer.length < n) {
        buffer = new byte[2 * n];
      }
      System.arraycopy(value.getBytes(), 0, buffer, 0, n);
      int k = Math.min(KEY_BYTES, n);
      for (int i = 0; i < k / 2; i++) {
        byte t = buffer[i];
        buffer[i] = buffer[k - 1 - i];
        buffer[k - 1 - i] = t;
      }
      mirrored.set(buffer, 0, n);
      ctx.write(mirrored, NullWritable.get());
    }
  }
}
