package phaseline.apps;

import org.apache.hadoop.io.Text;

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
  public static final class Widen extends Shapes.TextPair {
    @Override
    protected boolean read(Text line, Context ctx) {
      groupOf(line, k);
      v.clear();
      for (int i = 0; i < COPIES; i++) {
        v.append(line.getBytes(), 0, line.getLength());
      }
      return true;
    }
  }
}
