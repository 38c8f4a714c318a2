package phaseline.apps;

import java.io.IOException;
import java.util.Map;

import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.MapWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.io.Writable;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Reducer;

/**
 * Co-occurrence stripes (Lin and Dyer's "stripes" pattern): each record emits,
 * under its key's first character, an associative array of the key's other
 * characters with their counts ({@link MapWritable}), so every map output value
 * is a small serialized map; a combiner and the reduce merge the arrays
 * element by element.  The shape of a job whose cost is serializing and merging
 * structured values, not bytes.
 *
 * <p>Usage: Stripes INPUT OUTPUT REDUCES
 */
public final class Stripes extends App {

  public Stripes() {
    super("stripes", Neighbours.class, Merge.class, Merge.class, Text.class, MapWritable.class);
  }

  /** (line) -> (key's first character, {other key character: count}). */
  public static final class Neighbours extends Mapper<Object, Text, Text, MapWritable> {
    private final Text first = new Text();

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      int n = Math.min(KEY_BYTES, value.getLength());
      if (n < 2) {
        return;
      }
      byte[] b = value.getBytes();
      first.set(b, 0, 1);
      MapWritable stripe = new MapWritable();
      for (int i = 1; i < n; i++) {
        Text other = new Text();
        other.set(b, i, 1);
        IntWritable count = (IntWritable) stripe.get(other);
        if (count == null) {
          stripe.put(other, new IntWritable(1));
        } else {
          count.set(count.get() + 1);
        }
      }
      ctx.write(first, stripe);
    }
  }

  /** (character, stripes) -> (character, their element-wise sum): the combiner and the reduce. */
  public static final class Merge extends Reducer<Text, MapWritable, Text, MapWritable> {
    @Override
    protected void reduce(Text key, Iterable<MapWritable> values, Context ctx)
        throws IOException, InterruptedException {
      MapWritable sum = new MapWritable();
      for (MapWritable stripe : values) {
        for (Map.Entry<Writable, Writable> e : stripe.entrySet()) {
          IntWritable count = (IntWritable) sum.get(e.getKey());
          int add = ((IntWritable) e.getValue()).get();
          if (count == null) {
            sum.put(new Text((Text) e.getKey()), new IntWritable(add));
          } else {
            count.set(count.get() + add);
          }
        }
      }
      ctx.write(key, sum);
    }
  }
}
