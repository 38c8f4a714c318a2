package phaseline.apps;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.lib.reduce.LongSumReducer;

/**
 * In-mapper combining: each map counts its records per key prefix (the first
 * two characters, up to 9,025 of them) in a hash map and emits the counts when
 * it ends, so its output is bounded by the prefixes, not its input; one reduce
 * sums them.  No combiner (the map has combined already).
 *
 * <p>Usage: InMapperCombine INPUT OUTPUT REDUCES
 */
public final class InMapperCombine extends App {

  public InMapperCombine() {
    super("inmapper", Counting.class, null, LongSumReducer.class, Text.class, LongWritable.class);
  }

  /** Counts per prefix in memory; (prefix, count) for each at the map's end. */
  public static final class Counting extends Mapper<Object, Text, Text, LongWritable> {
    private final Map<String, long[]> counts = new HashMap<>();

    @Override
    protected void map(Object key, Text value, Context ctx) {
      String line = value.toString();
      counts.computeIfAbsent(groupOf(line), k -> new long[1])[0]++;
    }

    @Override
    protected void cleanup(Context ctx) throws IOException, InterruptedException {
      Text k = new Text();
      LongWritable v = new LongWritable();
      for (Map.Entry<String, long[]> e : counts.entrySet()) {
        k.set(e.getKey());
        v.set(e.getValue()[0]);
        ctx.write(k, v);
      }
    }
  }
}
