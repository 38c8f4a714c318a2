package phaseline.apps;

import org.apache.hadoop.io.Text;

/**
 * A skewed key: about 70 % of the records carry one hot key (the shape of a
 * null or default value in a join column), the rest spread over their first
 * three characters; every record is shuffled with its value, and one reduce
 * receives most of the data.  The reduce counts each key's records and their
 * bytes ({@link NGrams.Count}).
 *
 * <p>Usage: SkewedKey INPUT OUTPUT REDUCES
 */
public final class SkewedKey extends App {

  public SkewedKey() {
    super("skewkey", Skew.class, null, NGrams.Count.class, Text.class, Text.class);
  }

  /** (line) -> (hot key or key prefix, rest of the line). */
  public static final class Skew extends Shapes.TextPair {
    private static final byte[] HOT = "~hot~".getBytes();

    @Override
    protected boolean read(Text line, Context ctx) {
      byte[] b = line.getBytes();
      int n = line.getLength();
      if (n == 0) {
        return false;
      }
      if ((b[0] & 0xff) % 10 < 7) {
        k.set(HOT);
      } else {
        k.set(b, 0, Math.min(3, n));
      }
      valueOf(line, v);
      return true;
    }
  }
}
