package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.Reducer;
import org.apache.hadoop.mapreduce.lib.output.LazyOutputFormat;
import org.apache.hadoop.mapreduce.lib.output.MultipleOutputs;
import org.apache.hadoop.mapreduce.lib.output.TextOutputFormat;

/**
 * Many output files: every record shuffled as it is (the sort application's map, {@link Sort.Split}),
 * and each reduce writes every record into one of {@link #FILES} files named by its key's last byte
 * ({@link MultipleOutputs}, the way a job writes one directory per day or per country), so every
 * reduce creates, writes and commits {@link #FILES} files instead of one ({@link LazyOutputFormat}
 * leaves the empty default part file out).  No combiner.
 *
 * <p>Usage: MultiOutput INPUT OUTPUT REDUCES
 */
public final class MultiOutput extends App {

  /** Output files per reduce. */
  static final int FILES = 8;

  public MultiOutput() {
    super("multiout", Sort.Split.class, null, Spread.class, Text.class, Text.class);
  }

  @Override
  protected void configure(Job job, String[] args) throws Exception {
    super.configure(job, args);
    LazyOutputFormat.setOutputFormatClass(job, TextOutputFormat.class);
  }

  /** (key, values) -> every (key, value) into the file {@code part<key's last byte mod FILES>}. */
  public static final class Spread extends Reducer<Text, Text, Text, Text> {
    private MultipleOutputs<Text, Text> out;

    @Override
    protected void setup(Context ctx) {
      out = new MultipleOutputs<>(ctx);
    }

    @Override
    protected void reduce(Text key, Iterable<Text> values, Context ctx) throws IOException, InterruptedException {
      int n = key.getLength();
      int file = n == 0 ? 0 : (key.getBytes()[n - 1] & 0xff) % FILES;
      String name = "part" + file;
      for (Text v : values) {
        out.write(key, v, name);
      }
    }

    @Override
    protected void cleanup(Context ctx) throws IOException, InterruptedException {
      out.close();
    }
  }
}
