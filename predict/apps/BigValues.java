package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;

/**
 * Wide values: each record goes to its group (the key's first two characters) with its line written
 * {@link #COPIES} times as the value, so the map output is about four times the input; the reduce
 * ({@link NGrams.Count}) writes one line per group (its records and their bytes), so the output is tiny.
 *
 * <p>Usage: BigValues INPUT OUTPUT REDUCES
 */
public final class BigValues extends App {

  /** How many times a line is written into its value. */
  static final int COPIES = 4;

  public BigValues() {
    super("bigvalues", Widen.class, null, NGrams.Count.class, Text.class, Text.class);
  }

  /** (line) -> (group, the line {@link #COPIES} times). */
  public static final class Widen extends Mapper<Object, Text, Text, Text> {
    private final Text group = new Text();
    private final Text wide = new Text();

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      groupOf(value, group);
      wide.clear();
      for (int i = 0; i < COPIES; i++) {
        wide.append(value.getBytes(), 0, value.getLength());
      }
      ctx.write(group, wide);
    }
  }
}
