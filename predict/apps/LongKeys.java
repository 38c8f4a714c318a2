package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.lib.reduce.IntSumReducer;

/**
 * Small binary records: every record shuffled as a 12-byte pair, its key's 64-bit hash
 * ({@link LongWritable}, compared as raw bytes) and its line's length ({@link IntWritable}), so the
 * shuffle moves about an eighth of the input's bytes but every one of its records (per-record cost,
 * not per-byte, dominates the sort and the merge); the reduce sums the lengths of each hash
 * (Hadoop's {@link IntSumReducer}).
 * No combiner.
 *
 * <p>Usage: LongKeys INPUT OUTPUT REDUCES
 */
public final class LongKeys extends App {

  public LongKeys() {
    super("longkeys", Hashed.class, null, IntSumReducer.class, LongWritable.class, IntWritable.class);
  }

  /** (line) -> (64-bit hash of its key, its length). */
  public static final class Hashed extends Mapper<Object, Text, LongWritable, IntWritable> {
    private final LongWritable k = new LongWritable();
    private final IntWritable v = new IntWritable();

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      k.set(mix(0L, value.getBytes(), Math.min(KEY_BYTES, value.getLength()), 1));
      v.set(value.getLength());
      ctx.write(k, v);
    }
  }
}
