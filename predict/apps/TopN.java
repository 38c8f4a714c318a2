package phaseline.apps;

import java.io.IOException;
import java.util.TreeMap;

import org.apache.hadoop.io.NullWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Reducer;

/**
 * Top N: the N largest keys of the input (N = 10, {@code -D phaseline.topn.n}).
 * Each map keeps its own top N in memory and emits them only when it ends, so
 * the map output is a few records whatever the input; one reduce merges them.
 *
 * <p>Usage: TopN INPUT OUTPUT REDUCES
 */
public final class TopN extends App {

  public TopN() {
    super("topn", Largest.class, null, Merge.class, NullWritable.class, Text.class);
  }

  /** Keeps the map's N largest lines by key; emits them in cleanup. */
  public static final class Largest extends Mapper<Object, Text, NullWritable, Text> {
    private final TreeMap<String, String> top = new TreeMap<>();
    private int n;

    @Override
    protected void setup(Context ctx) {
      n = ctx.getConfiguration().getInt("phaseline.topn.n", 10);
    }

    @Override
    protected void map(Object key, Text value, Context ctx) {
      String line = value.toString();
      String k = keyOf(line);
      if (top.size() < n || k.compareTo(top.firstKey()) > 0) {
        top.put(k, line);
        if (top.size() > n) {
          top.pollFirstEntry();
        }
      }
    }

    @Override
    protected void cleanup(Context ctx) throws IOException, InterruptedException {
      for (String line : top.values()) {
        ctx.write(NullWritable.get(), new Text(line));
      }
    }
  }

  /** The N largest of the maps' candidates. */
  public static final class Merge extends Reducer<NullWritable, Text, NullWritable, Text> {
    @Override
    protected void reduce(NullWritable key, Iterable<Text> values, Context ctx)
        throws IOException, InterruptedException {
      int n = ctx.getConfiguration().getInt("phaseline.topn.n", 10);
      TreeMap<String, String> top = new TreeMap<>();
      for (Text v : values) {
        String line = v.toString();
        top.put(keyOf(line), line);
        if (top.size() > n) {
          top.pollFirstEntry();
        }
      }
      for (String line : top.descendingMap().values()) {
        ctx.write(NullWritable.get(), new Text(line));
      }
    }
  }
}
