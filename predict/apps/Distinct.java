package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.conf.Configured;
import org.apache.hadoop.io.NullWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Reducer;
import org.apache.hadoop.util.Tool;
import org.apache.hadoop.util.ToolRunner;

/**
 * Distinct: the distinct three-character key prefixes of the input (the shape
 * of SELECT DISTINCT), deduplicated by a combiner on the map side and again by
 * the reduce.
 *
 * <p>Usage: Distinct INPUT OUTPUT REDUCES
 */
public final class Distinct extends Configured implements Tool {

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

  @Override
  public int run(String[] args) throws Exception {
    return Apps.run(getConf(), "phaseline app distinct", Distinct.class, args,
        Prefix.class, Once.class, Once.class, Text.class, NullWritable.class);
  }

  public static void main(String[] args) throws Exception {
    System.exit(ToolRunner.run(new Distinct(), args));
  }
}
