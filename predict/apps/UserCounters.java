package phaseline.apps;

import org.apache.hadoop.io.Text;
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
  public static final class Check extends Shapes.TextPair {
    @Override
    protected boolean read(Text line, Context ctx) {
      byte[] b = line.getBytes();
      int sum = 0;
      for (int i = 0, n = Math.min(KEY_BYTES, line.getLength()); i < n; i++) {
        sum += b[i] & 0xff;
      }
      ctx.getCounter(GROUP, "category " + (sum % CATEGORIES)).increment(1);
      if (sum % 2 != 0) {
        ctx.getCounter(GROUP, "dropped").increment(1);
        return false;
      }
      keyOf(line, k);
      valueOf(line, v);
      return true;
    }
  }
}
