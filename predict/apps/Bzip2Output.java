package phaseline.apps;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.io.compress.BZip2Codec;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;

/**
 * A bzip2-compressed final output: the sort's map and reduce ({@link Sort.Split}, {@link Sort.Emit}),
 * every record written through Hadoop's BZip2Codec, whose compressor is Java code (no native
 * library here): the reduce's write of the job's whole data is its costliest phase (the shape of
 * jobs that archive their output as bzip2, which stays splittable).
 *
 * <p>Usage: Bzip2Output INPUT OUTPUT REDUCES
 */
public final class Bzip2Output extends App {

  public Bzip2Output() {
    super("bzip2output", Sort.Split.class, null, Sort.Emit.class, Text.class, Text.class);
  }

  @Override
  protected void configure(Job job, String[] args) throws Exception {
    super.configure(job, args);
    FileOutputFormat.setCompressOutput(job, true);
    FileOutputFormat.setOutputCompressorClass(job, BZip2Codec.class);
  }
}
