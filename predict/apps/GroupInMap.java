package phaseline.apps;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;

/**
 * In-mapper grouping that holds its whole split: each map keeps every record's value, grouped by the
 * key's first {@value #PREFIX} characters, in lists in memory, and at its end writes one record per
 * group (its values joined, sorted).  A map's live data grows with its split, as a mapper that builds
 * an index or a graph of its input in memory does; each reduce concatenates a group's lists.
 *
 * <p>Usage: GroupInMap INPUT OUTPUT REDUCES
 */
public final class GroupInMap extends App {

  /** Characters of the key a record is grouped by. */
  static final int PREFIX = 2;

  public GroupInMap() {
    super("groupinmap", Holding.class, null, Joined.class, Text.class, Text.class);
  }

  /** Holds (key prefix -> values) for the whole split; (prefix, values joined) at the map's end. */
  public static final class Holding extends Mapper<Object, Text, Text, Text> {
    private final Map<String, List<String>> groups = new HashMap<>();

    @Override
    protected void map(Object key, Text value, Context ctx) {
      String line = value.toString();
      int cut = Math.min(PREFIX, line.length());
      groups.computeIfAbsent(line.substring(0, cut), k -> new ArrayList<>()).add(line.substring(cut));
    }

    @Override
    protected void cleanup(Context ctx) throws IOException, InterruptedException {
      Text k = new Text();
      Text v = new Text();
      for (Map.Entry<String, List<String>> e : groups.entrySet()) {
        List<String> values = e.getValue();
        values.sort(null);
        k.set(e.getKey());
        v.set(String.join(",", values));
        ctx.write(k, v);
      }
    }
  }

  /** (prefix, lists) -> (prefix, the lists' length in values). */
  public static final class Joined extends Shapes.Summary<Text> {
    @Override
    protected String summary(Iterable<Text> values) {
      long n = 0;
      for (Text v : values) {
        byte[] b = v.getBytes();
        for (int i = 0, len = v.getLength(); i < len; i++) {
          if (b[i] == ',') {
            n++;
          }
        }
        n++;
      }
      return Long.toString(n);
    }
  }
}
