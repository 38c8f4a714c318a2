package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Reducer;

/**
 * Reduce waves: every record is shuffled under its key to four reduces, more
 * than the engine's reduce slots, so the reduces run in waves; each reduce
 * writes its records back out as they came (an identity sort on four partitions).
 *
 * <p>Usage: ReduceWaves INPUT OUTPUT REDUCES
 */
public final class ReduceWaves extends App {

  public ReduceWaves() {
    super("reducewaves", Split.class, null, Identity.class, Text.class, Text.class);
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

  /** (key, values) -> (key, value) for each value. */
  public static final class Identity extends Reducer<Text, Text, Text, Text> {
    @Override
    protected void reduce(Text key, Iterable<Text> values, Context ctx) throws IOException, InterruptedException {
      for (Text v : values) {
        ctx.write(key, v);
      }
    }
  }
}
