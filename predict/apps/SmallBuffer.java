package phaseline.apps;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;

/**
 * A sort buffer too small for a map's output: the sort application's map and reduce ({@link Sort})
 * with {@code mapreduce.task.io.sort.mb} at 1 MiB, so each map of a 2 MiB split spills several times
 * and merges its spills into one output file.  A held-out configuration of a tuning application's
 * code: what it tests is the spills and the merge, not new map or reduce work.
 *
 * <p>Usage: SmallBuffer INPUT OUTPUT REDUCES
 */
public final class SmallBuffer extends App {

  /** The map-side sort buffer, MiB. */
  static final int SORT_MB = 1;

  public SmallBuffer() {
    super("smallbuffer", Sort.Split.class, null, Sort.Emit.class, Text.class, Text.class);
  }

  @Override
  protected void configure(Job job, String[] args) throws Exception {
    super.configure(job, args);
    job.getConfiguration().setInt("mapreduce.task.io.sort.mb", SORT_MB);
  }
}
