package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.lib.input.NLineInputFormat;
import org.apache.hadoop.mapreduce.lib.reduce.LongSumReducer;

/**
 * Splits by lines, not bytes: {@link NLineInputFormat} gives each map {@value #LINES_PER_MAP} lines of
 * one file, so each of the suite's 2 MiB files (about 21,000 lines) is read by one full map and one
 * short one (the shape of a job whose input format cuts by records: parameter sweeps, one task per
 * batch of lines).  Each map sums its records' lengths by the key's first character, summed again by
 * a combiner and by the reduce ({@link LongSumReducer}).
 *
 * <p>Usage: NLines INPUT OUTPUT REDUCES
 */
public final class NLines extends App {

  /** Lines a map reads ({@code mapreduce.input.lineinputformat.linespermap}). */
  static final int LINES_PER_MAP = 16_000;

  public NLines() {
    super("nlines", FirstChar.class, LongSumReducer.class, LongSumReducer.class, Text.class,
        LongWritable.class);
  }

  @Override
  protected void configure(Job job, String[] args) throws Exception {
    super.configure(job, args);
    job.setInputFormatClass(NLineInputFormat.class);
    NLineInputFormat.setNumLinesPerSplit(job, LINES_PER_MAP);
  }

  /** (line) -> (its first character, its length). */
  public static final class FirstChar extends Mapper<Object, Text, Text, LongWritable> {
    private final Text first = new Text();
    private final LongWritable length = new LongWritable();

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      first.set(value.getBytes(), 0, Math.min(1, value.getLength()));
      length.set(value.getLength());
      ctx.write(first, length);
    }
  }
}
