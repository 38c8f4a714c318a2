package phaseline.apps;

import java.util.HashSet;
import java.util.Set;

import org.apache.hadoop.io.Text;

/**
 * Distinct keys by group, counted exactly in the reduce (the shape of {@code COUNT(DISTINCT k) ...
 * GROUP BY g}): every record is shuffled whole under its group (the group-by application's map,
 * {@link GroupBy.ByGroup}), and the reduce holds every key of the group in a hash set, so its
 * memory grows with the group; one record out a group.
 *
 * <p>Usage: GroupDistinct INPUT OUTPUT REDUCES
 */
public final class GroupDistinct extends App {

  public GroupDistinct() {
    super("groupdistinct", GroupBy.ByGroup.class, null, CountDistinct.class, Text.class, Text.class);
  }

  /** (group, lines) -> (group, number of distinct keys among the lines). */
  public static final class CountDistinct extends Shapes.Summary<Text> {
    @Override
    protected String summary(Iterable<Text> values) {
      Set<String> keys = new HashSet<>();
      for (Text v : values) {
        keys.add(keyOf(v.toString()));
      }
      return Integer.toString(keys.size());
    }
  }
}
