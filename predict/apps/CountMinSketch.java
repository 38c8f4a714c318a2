package phaseline.apps;

import java.io.IOException;
import java.nio.ByteBuffer;

import org.apache.hadoop.io.BytesWritable;
import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Reducer;

/**
 * A count-min sketch of the records' keys (Cormode and Muthukrishnan 2005): each map adds every key
 * to {@value #ROWS} rows of {@value #WIDTH} counters, each row under its own hash, and writes the rows
 * when its split is done, one record of {@value #WIDTH} longs a row; each reduce adds up a row's
 * copies counter by counter.  The map output is a fixed size a map (4 x 128 kB), whatever its
 * records: the shuffle grows with the maps, not with the bytes.
 *
 * <p>Usage: CountMinSketch INPUT OUTPUT REDUCES
 */
public final class CountMinSketch extends App {

  /** Rows of the sketch, each under its own hash. */
  static final int ROWS = 4;
  /** Counters a row. */
  static final int WIDTH = 16384;

  public CountMinSketch() {
    super("countminsketch", Sketch.class, null, Merge.class, IntWritable.class, BytesWritable.class);
  }

  /** Adds each key to the rows; at the split's end (row, its counters). */
  public static final class Sketch extends Mapper<Object, Text, IntWritable, BytesWritable> {
    private final long[][] counts = new long[ROWS][WIDTH];

    @Override
    protected void map(Object key, Text value, Context ctx) {
      byte[] b = value.getBytes();
      int n = Math.min(KEY_BYTES, value.getLength());
      for (int r = 0; r < ROWS; r++) {
        long h = mix(0x9E3779B97F4A7C15L * (r + 1), b, n, 1);
        counts[r][(int) ((h >>> 1) % WIDTH)]++;
      }
    }

    @Override
    protected void cleanup(Context ctx) throws IOException, InterruptedException {
      ByteBuffer row = ByteBuffer.allocate(WIDTH * Long.BYTES);
      for (int r = 0; r < ROWS; r++) {
        row.clear();
        row.asLongBuffer().put(counts[r]);
        ctx.write(new IntWritable(r), new BytesWritable(row.array()));
      }
    }
  }

  /** (row, copies) -> (row, the copies added counter by counter). */
  public static final class Merge extends Reducer<IntWritable, BytesWritable, IntWritable, BytesWritable> {
    @Override
    protected void reduce(IntWritable key, Iterable<BytesWritable> values, Context ctx)
        throws IOException, InterruptedException {
      long[] sum = new long[WIDTH];
      for (BytesWritable v : values) {
        ByteBuffer copy = ByteBuffer.wrap(v.getBytes(), 0, WIDTH * Long.BYTES);
        for (int i = 0; i < WIDTH; i++) {
          sum[i] += copy.getLong();
        }
      }
      ByteBuffer out = ByteBuffer.allocate(WIDTH * Long.BYTES);
      out.asLongBuffer().put(sum);
      ctx.write(key, new BytesWritable(out.array()));
    }
  }
}
