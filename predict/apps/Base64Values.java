package phaseline.apps;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

import org.apache.hadoop.io.Text;

/**
 * Encoded values: every line keyed by its group, its value base64-encoded in the map (the shuffle
 * carries about 4/3 of the input), decoded again in the reduce, which writes each group's decoded
 * bytes once (a line a group).  Text work on both sides of the shuffle.
 *
 * <p>Usage: Base64Values INPUT OUTPUT REDUCES
 */
public final class Base64Values extends App {

  public Base64Values() {
    super("base64values", Encode.class, null, Decode.class, Text.class, Text.class);
  }

  /** (line) -> (group, base64 of the line). */
  public static final class Encode extends Shapes.TextPair {
    private final Base64.Encoder encoder = Base64.getEncoder();

    @Override
    protected boolean read(Text line, Context ctx) {
      byte[] bytes = java.util.Arrays.copyOf(line.getBytes(), line.getLength());
      groupOf(line, k);
      v.set(encoder.encode(bytes));
      return true;
    }
  }

  /** (group, encoded lines) -> (group, "records decoded-bytes"). */
  public static final class Decode extends Shapes.Summary<Text> {
    private final Base64.Decoder decoder = Base64.getDecoder();

    @Override
    protected String summary(Iterable<Text> values) {
      long records = 0;
      long bytes = 0;
      for (Text v : values) {
        String s = new String(v.getBytes(), 0, v.getLength(), StandardCharsets.US_ASCII);
        bytes += decoder.decode(s).length;
        records++;
      }
      return records + " " + bytes;
    }
  }
}
