package phaseline.apps;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;

/**
 * Reduces held until every map has finished: the group-by application's map and reduce
 * ({@link GroupBy}) with {@code mapreduce.job.reduce.slowstart.completedmaps} at 1, so on a cluster
 * no reduce holds a container or fetches while maps run, and the whole shuffle follows the map
 * stage.  A held-out configuration of a tuning application's code: what it tests is the
 * scheduling of the reduces, not new map or reduce work (the LocalJobRunner starts its reduces after
 * the maps in any case).
 *
 * <p>Usage: LateReduces INPUT OUTPUT REDUCES
 */
public final class LateReduces extends App {

  public LateReduces() {
    super("latereduces", GroupBy.ByGroup.class, null, GroupBy.Aggregate.class, Text.class, Text.class);
  }

  @Override
  protected void configure(Job job, String[] args) throws Exception {
    super.configure(job, args);
    job.getConfiguration().setFloat("mapreduce.job.reduce.slowstart.completedmaps", 1.0f);
  }
}
