package phaseline.apps;

import java.io.IOException;
import java.util.HashSet;
import java.util.Set;

import org.apache.hadoop.io.NullWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Reducer;

/**
 * Record deduplication by a map-side seen-set: two records are duplicates when their keys share the
 * first {@value #PREFIX} characters (857,375 possible keys).  Each map remembers the keys it has
 * written (a set of strings that grows with its split) and passes a record on only the first time
 * its key appears in that map; each reduce keeps one record per key of the whole input.
 *
 * <p>Usage: Dedupe INPUT OUTPUT REDUCES
 */
public final class Dedupe extends App {

  /** Characters of the key that make two records duplicates. */
  static final int PREFIX = 3;

  public Dedupe() {
    super("dedupe", FirstSeen.class, null, KeepOne.class, Text.class, Text.class);
  }

  /** (line) -> (key prefix, line) the first time this map sees the prefix. */
  public static final class FirstSeen extends Mapper<Object, Text, Text, Text> {
    private final Set<String> seen = new HashSet<>();
    private final Text k = new Text();

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      String line = value.toString();
      String prefix = line.substring(0, Math.min(PREFIX, line.length()));
      if (seen.add(prefix)) {
        k.set(prefix);
        ctx.write(k, value);
      }
    }
  }

  /** One record per key: the first of its values. */
  public static final class KeepOne extends Reducer<Text, Text, Text, NullWritable> {
    @Override
    protected void reduce(Text key, Iterable<Text> values, Context ctx) throws IOException, InterruptedException {
      ctx.write(values.iterator().next(), NullWritable.get());
    }
  }
}
