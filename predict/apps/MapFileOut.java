package phaseline.apps;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.Reducer;
import org.apache.hadoop.mapreduce.lib.output.MapFileOutputFormat;

/**
 * A sort into an indexed output: every record is shuffled under its key ({@link Sort}'s map), and each
 * reduce writes its sorted partition through {@link MapFileOutputFormat}, a MapFile (a data
 * SequenceFile and an index of every 128th key, for lookups by key later).  The reduce is Hadoop's identity {@link Reducer}.
 *
 * <p>Usage: MapFileOut INPUT OUTPUT REDUCES
 */
public final class MapFileOut extends App {

  public MapFileOut() {
    super("mapfileout", Sort.Split.class, null, Reducer.class, Text.class, Text.class);
  }

  @Override
  protected void configure(Job job, String[] args) throws Exception {
    super.configure(job, args);
    job.setOutputFormatClass(MapFileOutputFormat.class);
  }
}
