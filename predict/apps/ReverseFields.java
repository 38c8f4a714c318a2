package phaseline.apps;

import org.apache.hadoop.io.Text;

/**
 * A map-only reshaping of records (the shape of a column reorder in an export): every record written
 * again with its key, and the whitespace-separated fields of the rest of its line in reverse order.
 * No shuffle; the output as large as the input.
 *
 * <p>Usage: ReverseFields INPUT OUTPUT 0
 */
public final class ReverseFields extends App {

  public ReverseFields() {
    super("reversefields", Reverse.class, null, null, Text.class, Text.class);
  }

  /** (line) -> (the line's key, the rest of the line's fields, last first). */
  public static final class Reverse extends Shapes.TextPair {
    private final StringBuilder out = new StringBuilder();

    @Override
    protected boolean read(Text line, Context ctx) {
      keyOf(line, k);
      valueOf(line, v);
      String[] fields = v.toString().trim().split("\\s+");
      out.setLength(0);
      for (int i = fields.length - 1; i >= 0; i--) {
        if (out.length() > 0) {
          out.append(' ');
        }
        out.append(fields[i]);
      }
      v.set(out.toString());
      return true;
    }
  }
}
