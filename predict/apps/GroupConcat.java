package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Reducer;

/**
 * Every group's records gathered into one (the shape of {@code GROUP_CONCAT} or Spark's
 * {@code collect_list}): every record is shuffled whole under its group (the group-by application's
 * map, {@link GroupBy.ByGroup}), and the reduce appends a group's records, '|' between them, into
 * one output value.  The shuffle and the output each carry about all the input; the reduce holds a
 * whole group in memory and writes one long record a group.
 *
 * <p>Usage: GroupConcat INPUT OUTPUT REDUCES
 */
public final class GroupConcat extends App {

  public GroupConcat() {
    super("groupconcat", GroupBy.ByGroup.class, null, Concat.class, Text.class, Text.class);
  }

  /** (group, lines) -> (group, "line|line|..."). */
  public static final class Concat extends Reducer<Text, Text, Text, Text> {
    private final StringBuilder all = new StringBuilder();
    private final Text out = new Text();

    @Override
    protected void reduce(Text key, Iterable<Text> values, Context ctx) throws IOException, InterruptedException {
      all.setLength(0);
      for (Text v : values) {
        if (all.length() > 0) {
          all.append('|');
        }
        all.append(v.toString());
      }
      out.set(all.toString());
      ctx.write(key, out);
    }
  }
}
