package phaseline.apps;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.lib.reduce.IntSumReducer;

/**
 * An allocation-heavy map: for each line it counts the line's three-character substrings in a new
 * map of boxed counts, {@link #ROUNDS} times over (a few hundred short-lived objects a record: work
 * for the garbage collector more than for the CPU's arithmetic), and emits the largest count under the
 * key's first two characters; a combiner and the reduce sum them.
 *
 * <p>Usage: GarbageMap INPUT OUTPUT REDUCES
 */
public final class GarbageMap extends App {

  /** Times each line's substrings are counted again. */
  static final int ROUNDS = 4;

  public GarbageMap() {
    super("garbagemap", Trigrams.class, IntSumReducer.class, IntSumReducer.class, Text.class, IntWritable.class);
  }

  /** (line) -> (key's first two characters, the count of its most frequent trigram). */
  public static final class Trigrams extends Mapper<Object, Text, Text, IntWritable> {
    private final Text group = new Text();
    private final IntWritable most = new IntWritable();

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      String line = value.toString();
      int best = 0;
      for (int r = 0; r < ROUNDS; r++) {
        Map<String, Integer> counts = new HashMap<>();
        for (int i = 0; i + 3 <= line.length(); i++) {
          counts.merge(line.substring(i, i + 3), 1, Integer::sum);
        }
        for (Integer c : counts.values()) {
          best = Math.max(best, c);
        }
      }
      group.set(groupOf(line));
      most.set(best);
      ctx.write(group, most);
    }
  }
}
