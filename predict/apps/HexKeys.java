package phaseline.apps;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.util.StringUtils;

/**
 * A map-only re-encoding (the shape of an export to a text-safe format): every record written again
 * with its key in hexadecimal ({@link StringUtils#byteToHexString}) before the rest of its line.  No
 * shuffle; the output a little larger than the input.
 *
 * <p>Usage: HexKeys INPUT OUTPUT 0
 */
public final class HexKeys extends App {

  public HexKeys() {
    super("hexkeys", Hex.class, null, null, Text.class, Text.class);
  }

  /** (line) -> (the line's key in hex, the rest of the line). */
  public static final class Hex extends Shapes.TextPair {
    @Override
    protected boolean read(Text line, Context ctx) {
      k.set(StringUtils.byteToHexString(line.getBytes(), 0, Math.min(KEY_BYTES, line.getLength())));
      valueOf(line, v);
      return true;
    }
  }
}
