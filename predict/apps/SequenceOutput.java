package phaseline.apps;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.lib.output.SequenceFileOutputFormat;

/**
 * A binary final output: every record shuffled as it is (the sort application's map,
 * {@link Sort.Split}), Hadoop's identity reduce, and the output written as a SequenceFile
 * ({@link SequenceFileOutputFormat}: length-prefixed Writables with sync markers) instead of
 * text lines, the container most multi-job pipelines hand on.  No combiner.
 *
 * <p>Usage: SequenceOutput INPUT OUTPUT REDUCES
 */
public final class SequenceOutput extends App {

  public SequenceOutput() {
    super("seqoutput", Sort.Split.class, null, null, Text.class, Text.class);
  }

  @Override
  protected void configure(Job job, String[] args) throws Exception {
    super.configure(job, args);
    job.setOutputFormatClass(SequenceFileOutputFormat.class);
  }
}
