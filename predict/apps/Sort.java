package phaseline.apps;

import org.apache.hadoop.io.Text;
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
  public static final class Split extends Shapes.TextPair {
    @Override
    protected boolean read(Text line, Context ctx) {
      keyOf(line, k);
      valueOf(line, v);
      return true;
    }
  }

  /** Writes every value of a key, in key order: Hadoop's identity reduce. */
  public static final class Emit extends Reducer<Text, Text, Text, Text> {
  }
}
