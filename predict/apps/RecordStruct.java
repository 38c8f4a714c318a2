package phaseline.apps;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.util.Arrays;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.io.Writable;
import org.apache.hadoop.io.WritableUtils;
import org.apache.hadoop.mapreduce.Mapper;

/**
 * Structured values: each line parsed into a record of its own {@link Writable} type (its key, four
 * variable-length integers and a double read off its bytes, and its last eight characters), every
 * record shuffled under its group (the key's first two characters), serialized field by field
 * into the map's buffer and read back field by field in the reduce's merge and reduce, which
 * writes each group's count, minimum, maximum and mean per field as one line.  No combiner.
 *
 * <p>Usage: RecordStruct INPUT OUTPUT REDUCES
 */
public final class RecordStruct extends App {

  public RecordStruct() {
    super("recordstruct", Parse.class, null, Summarize.class, Text.class, Text.class, Fields.class);
  }

  /** A parsed line: its key, four integers, a double and a tag. */
  public static final class Fields implements Writable {
    final Text key = new Text();
    final long[] ints = new long[4];
    double ratio;
    final Text tag = new Text();

    @Override
    public void write(DataOutput out) throws IOException {
      key.write(out);
      for (long i : ints) {
        WritableUtils.writeVLong(out, i);
      }
      out.writeDouble(ratio);
      tag.write(out);
    }

    @Override
    public void readFields(DataInput in) throws IOException {
      key.readFields(in);
      for (int i = 0; i < ints.length; i++) {
        ints[i] = WritableUtils.readVLong(in);
      }
      ratio = in.readDouble();
      tag.readFields(in);
    }
  }

  /** (line) -> (group, the line's fields). */
  public static final class Parse extends Mapper<Object, Text, Text, Fields> {
    private final Text group = new Text();
    private final Fields fields = new Fields();

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      byte[] b = value.getBytes();
      int n = value.getLength();
      groupOf(value, group);
      keyOf(value, fields.key);
      for (int i = 0; i < fields.ints.length; i++) {
        long v = 0;
        for (int j = KEY_BYTES + 8 * i; j < Math.min(n, KEY_BYTES + 8 * (i + 1)); j++) {
          v = v * 31 + (b[j] & 0xff);
        }
        fields.ints[i] = v;
      }
      fields.ratio = n == 0 ? 0.0 : (double) (b[n - 1] & 0xff) / (b[0] & 0xff | 1);
      fields.tag.set(b, Math.max(0, n - 8), Math.min(8, n));
      ctx.write(group, fields);
    }
  }

  /** (group, its records) -> one line: the count, and each field's minimum, maximum and mean. */
  public static final class Summarize extends Shapes.Summary<Fields> {
    @Override
    protected String summary(Iterable<Fields> values) {
      int k = 5;
      double[] min = new double[k];
      double[] max = new double[k];
      double[] sum = new double[k];
      Arrays.fill(min, Double.MAX_VALUE);
      Arrays.fill(max, -Double.MAX_VALUE);
      long count = 0;
      for (Fields f : values) {
        for (int i = 0; i < k; i++) {
          double v = i < f.ints.length ? f.ints[i] : f.ratio;
          min[i] = Math.min(min[i], v);
          max[i] = Math.max(max[i], v);
          sum[i] += v;
        }
        count++;
      }
      StringBuilder out = new StringBuilder().append(count);
      for (int i = 0; i < k; i++) {
        out.append('\t').append(min[i]).append('\t').append(max[i]).append('\t').append(sum[i] / count);
      }
      return out.toString();
    }
  }
}
