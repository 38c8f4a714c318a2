package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.io.WritableComparator;
import org.apache.hadoop.io.WritableUtils;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.Partitioner;
import org.apache.hadoop.mapreduce.Reducer;

/**
 * A secondary sort: the map output key is the record's key (group = its first
 * two characters, then the whole key), a partitioner of its own sends a group to
 * one reduce, and a grouping comparator of its own hands the reduce a group's
 * records in key order.  The reduce emits each group's size and its first and
 * last record numbers.
 *
 * <p>Usage: SecondarySort INPUT OUTPUT REDUCES
 */
public final class SecondarySort extends App {

  /** Characters of the key that form its group. */
  static final int GROUP = 2;

  public SecondarySort() {
    super("secondarysort", Keyed.class, null, FirstLast.class, Text.class, Text.class);
  }

  @Override
  protected void configure(Job job, String[] args) throws Exception {
    super.configure(job, args);
    job.setPartitionerClass(ByGroup.class);
    job.setGroupingComparatorClass(GroupComparator.class);
  }

  /** (line) -> (key, record number). */
  public static final class Keyed extends Shapes.TextPair {
    @Override
    protected boolean read(Text line, Context ctx) {
      keyOf(line, k);
      int n = line.getLength();
      int from = Math.min(KEY_BYTES + 1, n);
      v.set(line.getBytes(), from, Math.min(32, n - from));
      return true;
    }
  }

  /** A key's group, hashed to a reduce. */
  public static final class ByGroup extends Partitioner<Text, Text> {
    @Override
    public int getPartition(Text key, Text value, int partitions) {
      int h = WritableComparator.hashBytes(key.getBytes(), Math.min(GROUP, key.getLength()));
      return (h & Integer.MAX_VALUE) % partitions;
    }
  }

  /** Keys compare by their group alone (the bytes of a serialized Text: a length, then the characters). */
  public static final class GroupComparator extends WritableComparator {
    public GroupComparator() {
      super(Text.class);
    }

    @Override
    public int compare(byte[] b1, int s1, int l1, byte[] b2, int s2, int l2) {
      int h1 = WritableUtils.decodeVIntSize(b1[s1]);
      int h2 = WritableUtils.decodeVIntSize(b2[s2]);
      return compareBytes(b1, s1 + h1, Math.min(GROUP, l1 - h1), b2, s2 + h2, Math.min(GROUP, l2 - h2));
    }
  }

  /** (group's first key, record numbers in key order) -> (group, "records first last"). */
  public static final class FirstLast extends Reducer<Text, Text, Text, Text> {
    private final Text group = new Text();
    private final Text out = new Text();

    @Override
    protected void reduce(Text key, Iterable<Text> values, Context ctx) throws IOException, InterruptedException {
      group.set(key.getBytes(), 0, Math.min(GROUP, key.getLength()));
      long records = 0;
      String first = null;
      String last = null;
      for (Text v : values) {
        last = v.toString();
        if (first == null) {
          first = last;
        }
        records++;
      }
      out.set(records + " " + first + " " + last);
      ctx.write(group, out);
    }
  }
}
