package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.io.compress.GzipCodec;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.Reducer;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;

/**
 * A gzip-compressed final output: records grouped by their key's first two
 * characters (the group-by application's map, {@link GroupBy.ByGroup}), and the
 * reduce writes every record back, numbered within its group, through Hadoop's
 * GzipCodec ({@code mapreduce.output.fileoutputformat.compress}), so the
 * reduce's write phase pays to compress all the job's data (what most
 * production jobs writing to HDFS do).  No combiner.
 *
 * <p>Usage: GzipOutput INPUT OUTPUT REDUCES
 */
public final class GzipOutput extends App {

  public GzipOutput() {
    super("gzipoutput", GroupBy.ByGroup.class, null, Numbered.class, Text.class, Text.class);
  }

  @Override
  protected void configure(Job job, String[] args) throws Exception {
    super.configure(job, args);
    FileOutputFormat.setCompressOutput(job, true);
    FileOutputFormat.setOutputCompressorClass(job, GzipCodec.class);
  }

  /** (prefix, lines) -> (prefix, "i line") for the i-th line of the group. */
  public static final class Numbered extends Reducer<Text, Text, Text, Text> {
    private final Text out = new Text();

    @Override
    protected void reduce(Text key, Iterable<Text> values, Context ctx) throws IOException, InterruptedException {
      long i = 0;
      for (Text v : values) {
        out.set(i++ + " " + v);
        ctx.write(key, out);
      }
    }
  }
}
