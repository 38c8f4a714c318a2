package phaseline.apps;

import java.io.IOException;
import java.util.Arrays;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Reducer;

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
  public static final class Signature extends Mapper<Object, Text, Text, Text> {
    private final Text signature = new Text();
    private final Text word = new Text();
    private final byte[] sorted = new byte[KEY_BYTES];

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      int n = Math.min(KEY_BYTES, value.getLength());
      System.arraycopy(value.getBytes(), 0, sorted, 0, n);
      Arrays.sort(sorted, 0, n);
      signature.set(sorted, 0, n);
      word.set(value.getBytes(), 0, n);
      ctx.write(signature, word);
    }
  }

  /** (signature, keys) -> (signature, "size key key ..."). */
  public static final class Members extends Reducer<Text, Text, Text, Text> {
    private final Text out = new Text();

    @Override
    protected void reduce(Text key, Iterable<Text> values, Context ctx) throws IOException, InterruptedException {
      StringBuilder keys = new StringBuilder();
      int size = 0;
      for (Text v : values) {
        keys.append(' ').append(v);
        size++;
      }
      out.set(size + keys.toString());
      ctx.write(key, out);
    }
  }
}
