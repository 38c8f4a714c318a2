package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.io.Text;

/**
 * An expanding map: every record is emitted three times, under each of its key's
 * three overlapping 8-character windows, with the rest of the line as the value
 * (the shape of n-gram or pair generation), so the map output is about three
 * times the input.  No combiner; the reduce counts each window's records and
 * their bytes.
 *
 * <p>Usage: NGrams INPUT OUTPUT REDUCES
 */
public final class NGrams extends App {

  /** Characters of a window of the key. */
  static final int WINDOW = 8;

  public NGrams() {
    super("ngrams", Windows.class, null, Count.class, Text.class, Text.class);
  }

  /** (line) -> (window, rest of the line) for each of the key's windows. */
  public static final class Windows extends Shapes.TextOut {
    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      byte[] b = value.getBytes();
      int keyLength = Math.min(KEY_BYTES, value.getLength());
      valueOf(value, v);
      for (int start = 0; start + WINDOW <= keyLength; start++) {
        k.set(b, start, WINDOW);
        ctx.write(k, v);
      }
    }
  }

  /** (window, values) -> (window, "records bytes"). */
  public static final class Count extends Shapes.Summary<Text> {
    @Override
    protected String summary(Iterable<Text> values) {
      long records = 0;
      long bytes = 0;
      for (Text v : values) {
        records++;
        bytes += v.getLength();
      }
      return records + " " + bytes;
    }
  }
}
