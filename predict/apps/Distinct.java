package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.io.NullWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Reducer;

/**
 * Distinct: the distinct three-character key prefixes of the input (the shape
 * of SELECT DISTINCT), deduplicated by a combiner on the map side and again by
 * the reduce.
 *
 * <p>Usage: Distinct INPUT OUTPUT REDUCES
 */
public final class Distinct extends App {

  public Distinct() {
    super("distinct", Prefix.class, Once.class, Once.class, Text.class, NullWritable.class);
  }

  /** (line) -> (key prefix, nothing). */
  public static final class Prefix extends Mapper<Object, Text, Text, NullWritable> {
    private final Text k = new Text();

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      k.set(value.getBytes(), 0, Math.min(3, value.getLength()));
      ctx.write(k, NullWritable.get());
    }
  }

  /** One record per key (also the combiner). */
  public static final class Once extends Reducer<Text, NullWritable, Text, NullWritable> {
    @Override
    protected void reduce(Text key, Iterable<NullWritable> values, Context ctx)
        throws IOException, InterruptedException {
      ctx.write(key, NullWritable.get());
    }
  }
}
