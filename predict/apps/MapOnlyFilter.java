package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.io.NullWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;

/**
 * Map-only filter: keeps the records whose key starts with a character of even
 * code (about half of them), upper-cased; no reduce.  The shape of an ETL
 * cleaning pass.  Run with REDUCES 0.
 *
 * <p>Usage: MapOnlyFilter INPUT OUTPUT REDUCES
 */
public final class MapOnlyFilter extends App {

  public MapOnlyFilter() {
    super("maponly", Keep.class, null, null, Text.class, NullWritable.class);
  }

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
}
