package phaseline.apps;

import java.util.Arrays;

import org.apache.hadoop.io.Text;

/**
 * Anagram classes of the records' keys: each key's characters sorted are its signature, and the
 * keys that share one are a class.  The map sorts ten characters a record and writes (signature,
 * key), a fifth of the input's bytes, every record shuffled and none combined; the reduce writes a
 * class's size and its keys.  Nearly every signature is its own class (ten characters of 95).
 *
 * <p>Usage: Anagrams INPUT OUTPUT REDUCES
 */
public final class Anagrams extends App {

  public Anagrams() {
    super("anagrams", Signature.class, null, Members.class, Text.class, Text.class);
  }

  /** (line) -> (its key's characters sorted, its key). */
  public static final class Signature extends Shapes.TextPair {
    private final byte[] sorted = new byte[KEY_BYTES];

    @Override
    protected boolean read(Text line, Context ctx) {
      int n = Math.min(KEY_BYTES, line.getLength());
      System.arraycopy(line.getBytes(), 0, sorted, 0, n);
      Arrays.sort(sorted, 0, n);
      k.set(sorted, 0, n);
      v.set(line.getBytes(), 0, n);
      return true;
    }
  }

  /** (signature, keys) -> (signature, "size key key ..."). */
  public static final class Members extends Shapes.Summary<Text> {
    @Override
    protected String summary(Iterable<Text> values) {
      StringBuilder keys = new StringBuilder();
      int size = 0;
      for (Text v : values) {
        keys.append(' ').append(v);
        size++;
      }
      return size + keys.toString();
    }
  }
}
