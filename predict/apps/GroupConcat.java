package phaseline.apps;

import org.apache.hadoop.io.Text;

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
  public static final class Concat extends Shapes.Joined {
    public Concat() {
      super('|');
    }
  }
}
