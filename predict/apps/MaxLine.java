package phaseline.apps;

import org.apache.hadoop.io.Text;

/**
 * The greatest line of every group (the shape of a GROUP BY with MAX over a text column): every record
 * shuffled to its group ({@link App#groupOf}) with the rest of its line, the greatest kept (by Hadoop's
 * byte order of {@link Text}) in a combiner and the reduces.  The whole input read and compared, a
 * shuffle cut to one record a group a spill by the combiner.
 *
 * <p>Usage: MaxLine INPUT OUTPUT REDUCES
 */
public final class MaxLine extends App {

  public MaxLine() {
    super("maxline", ByGroup.class, Greatest.class, Greatest.class, Text.class, Text.class);
  }

  /** (line) -> (the line's group, the rest of the line). */
  public static final class ByGroup extends Shapes.TextPair {
    @Override
    protected boolean read(Text line, Context ctx) {
      groupOf(line, k);
      valueOf(line, v);
      return true;
    }
  }

  /** (group, lines) -> (group, the greatest of them). */
  public static final class Greatest extends Shapes.Summary<Text> {
    private final Text best = new Text();

    @Override
    protected String summary(Iterable<Text> values) {
      boolean first = true;
      for (Text v : values) {
        if (first || v.compareTo(best) > 0) {
          best.set(v);
          first = false;
        }
      }
      return best.toString();
    }
  }
}
