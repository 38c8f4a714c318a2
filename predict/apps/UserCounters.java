package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Reducer;

/**
 * A validating filter that counts what it sees in counters of its own: each map checks every record
 * (its key's bytes summed), keeps those whose sum is even, and counts each record in one of
 * {@value #CATEGORIES} counters of the group {@value #GROUP} by that sum (the shape of an ETL job's
 * data-quality counters, which job history carries beside Hadoop's).  The kept records are shuffled
 * whole, key and rest, and written by Hadoop's identity reduce.
 *
 * <p>Usage: UserCounters INPUT OUTPUT REDUCES
 */
public final class UserCounters extends App {

  /** The counter group of the records' categories. */
  static final String GROUP = "phaseline record checks";
  /** Categories a record is counted in (Hadoop allows 120 counters a job by default). */
  static final int CATEGORIES = 24;

  public UserCounters() {
    super("usercounters", Check.class, null, Reducer.class, Text.class, Text.class);
  }

  /** (line) -> (key, rest) for a line whose key's byte sum is even; every line counted by that sum. */
  public static final class Check extends Mapper<Object, Text, Text, Text> {
    private final Text k = new Text();
    private final Text v = new Text();

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      byte[] b = value.getBytes();
      int sum = 0;
      for (int i = 0, n = Math.min(KEY_BYTES, value.getLength()); i < n; i++) {
        sum += b[i] & 0xff;
      }
      ctx.getCounter(GROUP, "category " + (sum % CATEGORIES)).increment(1);
      if (sum % 2 == 0) {
        keyOf(value, k);
        valueOf(value, v);
        ctx.write(k, v);
      } else {
        ctx.getCounter(GROUP, "dropped").increment(1);
      }
    }
  }
}
