package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Reducer;

/**
 * Sort: every line keyed by its first ten bytes (the TeraGen-like key), the rest
 * as the value; each reduce writes its partition in key order.  Map and reduce
 * selectivity 1.  Backtest application 2.
 *
 * <p>Usage: Sort INPUT OUTPUT REDUCES
 */
public final class Sort extends App {

  public Sort() {
    super("sort", Split.class, null, Emit.class, Text.class, Text.class);
  }

  /** (line) -> (key, rest of the line). */
  public static final class Split extends Mapper<Object, Text, Text, Text> {
    private final Text k = new Text();
    private final Text v = new Text();

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      keyOf(value, k);
      valueOf(value, v);
      ctx.write(k, v);
    }
  }

  /** Writes every value of a key, in key order. */
  public static final class Emit extends Reducer<Text, Text, Text, Text> {
    @Override
    protected void reduce(Text key, Iterable<Text> values, Context ctx) throws IOException, InterruptedException {
      for (Text v : values) {
        ctx.write(key, v);
      }
    }
  }
}
