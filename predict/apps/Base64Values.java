package phaseline.apps;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Reducer;

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
  public static final class Encode extends Mapper<Object, Text, Text, Text> {
    private final Base64.Encoder encoder = Base64.getEncoder();
    private final Text group = new Text();
    private final Text encoded = new Text();

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      byte[] line = java.util.Arrays.copyOf(value.getBytes(), value.getLength());
      groupOf(value, group);
      encoded.set(encoder.encode(line));
      ctx.write(group, encoded);
    }
  }

  /** (group, encoded lines) -> (group, "records decoded-bytes"). */
  public static final class Decode extends Reducer<Text, Text, Text, Text> {
    private final Base64.Decoder decoder = Base64.getDecoder();
    private final Text out = new Text();

    @Override
    protected void reduce(Text key, Iterable<Text> values, Context ctx) throws IOException, InterruptedException {
      long records = 0;
      long bytes = 0;
      for (Text v : values) {
        String s = new String(v.getBytes(), 0, v.getLength(), StandardCharsets.US_ASCII);
        bytes += decoder.decode(s).length;
        records++;
      }
      out.set(records + " " + bytes);
      ctx.write(key, out);
    }
  }
}
