package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.lib.reduce.LongSumReducer;

/**
 * Character classes by group (the shape of a data-quality profile of text): every byte of every line
 * classed as a letter, a digit, a blank or other, and the four counts written under the line's group
 * ({@link App#groupOf}), summed in a combiner and the reduces ({@link LongSumReducer}).  A scan of
 * every byte in the map, four records out per record, keys by the ten thousand.
 *
 * <p>Usage: CharClasses INPUT OUTPUT REDUCES
 */
public final class CharClasses extends App {

  public CharClasses() {
    super("charclasses", Classes.class, LongSumReducer.class, LongSumReducer.class, Text.class,
        LongWritable.class);
  }

  /** (line) -> (group:class, the line's bytes of that class) for the four classes. */
  public static final class Classes extends Mapper<Object, Text, Text, LongWritable> {
    private static final String[] NAMES = {":letter", ":digit", ":blank", ":other"};
    private final Text group = new Text();
    private final Text key = new Text();
    private final LongWritable count = new LongWritable();
    private final long[] counts = new long[NAMES.length];

    @Override
    protected void map(Object offset, Text value, Context ctx) throws IOException, InterruptedException {
      java.util.Arrays.fill(counts, 0);
      byte[] b = value.getBytes();
      for (int i = 0, n = value.getLength(); i < n; i++) {
        int c = b[i] & 0xff;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
          counts[0]++;
        } else if (c >= '0' && c <= '9') {
          counts[1]++;
        } else if (c == ' ' || c == '\t') {
          counts[2]++;
        } else {
          counts[3]++;
        }
      }
      App.groupOf(value, group);
      String prefix = group.toString();
      for (int k = 0; k < NAMES.length; k++) {
        key.set(prefix + NAMES[k]);
        count.set(counts[k]);
        ctx.write(key, count);
      }
    }
  }
}
