package phaseline.apps;

import java.io.IOException;
import java.util.StringTokenizer;

import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.lib.reduce.LongSumReducer;

/**
 * A histogram of token lengths (the shape of a profiling pass over text: how long are its words):
 * every whitespace-separated token of every line counted under its length, summed in a combiner and
 * the reduce ({@link LongSumReducer}).  Many map outputs per record, a few dozen keys, a tiny shuffle
 * and output.
 *
 * <p>Usage: LengthHistogram INPUT OUTPUT REDUCES
 */
public final class LengthHistogram extends App {

  public LengthHistogram() {
    super("lengthhistogram", Lengths.class, LongSumReducer.class, LongSumReducer.class, IntWritable.class,
        LongWritable.class);
  }

  /** (line) -> (a token's length, 1) for every token of the line. */
  public static final class Lengths extends Mapper<Object, Text, IntWritable, LongWritable> {
    private static final LongWritable ONE = new LongWritable(1);
    private final IntWritable length = new IntWritable();

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      StringTokenizer it = new StringTokenizer(value.toString());
      while (it.hasMoreTokens()) {
        length.set(it.nextToken().length());
        ctx.write(length, ONE);
      }
    }
  }
}
