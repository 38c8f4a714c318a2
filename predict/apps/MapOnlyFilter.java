package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.conf.Configured;
import org.apache.hadoop.io.NullWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.util.Tool;
import org.apache.hadoop.util.ToolRunner;

/**
 * Map-only filter: keeps the records whose key starts with a character of even
 * code (about half of them), upper-cased; no reduce.  The shape of an ETL
 * cleaning pass.  Run with REDUCES 0.
 *
 * <p>Usage: MapOnlyFilter INPUT OUTPUT REDUCES
 */
public final class MapOnlyFilter extends Configured implements Tool {

  /** (line) -> (line upper-cased) for the lines it keeps. */
  public static final class Keep extends Mapper<Object, Text, Text, NullWritable> {
    private final Text out = new Text();

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      if (value.getLength() == 0 || (value.getBytes()[0] & 1) != 0) {
        return;
      }
      out.set(value.toString().toUpperCase());
      ctx.write(out, NullWritable.get());
    }
  }

  @Override
  public int run(String[] args) throws Exception {
    return Apps.run(getConf(), "phaseline app maponly", MapOnlyFilter.class, args,
        Keep.class, null, null, Text.class, NullWritable.class);
  }

  public static void main(String[] args) throws Exception {
    System.exit(ToolRunner.run(new MapOnlyFilter(), args));
  }
}
