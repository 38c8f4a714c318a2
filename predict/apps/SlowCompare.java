package phaseline.apps;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.io.WritableComparable;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Reducer;

/**
 * A sort in descending key order by a key class with no raw comparator: Hadoop's generic
 * {@code WritableComparator} then reads both keys back into objects for every comparison, in each
 * map's sort and spill and in each reduce's merge, where a {@link Text} key compares its bytes.  The
 * records pass through unchanged (the identity reduce), so the data moved is sort's; the sorting
 * costs more CPU.
 *
 * <p>Usage: SlowCompare INPUT OUTPUT REDUCES
 */
public final class SlowCompare extends App {

  public SlowCompare() {
    super("slowcompare", ByKey.class, null, Reducer.class, DescendingKey.class, Text.class);
  }

  /** A record's key, ordered from the largest down; no raw comparator is registered for it. */
  public static final class DescendingKey implements WritableComparable<DescendingKey> {
    private String key = "";

    void set(String k) {
      key = k;
    }

    @Override
    public void write(DataOutput out) throws IOException {
      out.writeUTF(key);
    }

    @Override
    public void readFields(DataInput in) throws IOException {
      key = in.readUTF();
    }

    @Override
    public int compareTo(DescendingKey other) {
      return other.key.compareTo(key);
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof DescendingKey && ((DescendingKey) o).key.equals(key);
    }

    @Override
    public int hashCode() {
      return key.hashCode();
    }

    @Override
    public String toString() {
      return key;
    }
  }

  /** (line) -> (its key, the rest of the line). */
  public static final class ByKey extends Mapper<Object, Text, DescendingKey, Text> {
    private final DescendingKey k = new DescendingKey();
    private final Text v = new Text();

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      k.set(keyOf(value.toString()));
      valueOf(value, v);
      ctx.write(k, v);
    }
  }
}
