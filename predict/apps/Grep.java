package phaseline.apps;

import java.io.IOException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.lib.reduce.LongSumReducer;

/**
 * Grep: counts the matches of a regular expression (two digits in a row, by
 * default; {@code -D phaseline.grep.regex=...} changes it), like Hadoop's
 * example Grep's search job.  Low map selectivity, a combiner.  Backtest
 * application 3.
 *
 * <p>Usage: Grep INPUT OUTPUT REDUCES
 */
public final class Grep extends App {

  public Grep() {
    super("grep", Match.class, LongSumReducer.class, LongSumReducer.class, Text.class, LongWritable.class);
  }

  /** Emits (match, 1) for every match in a line. */
  public static final class Match extends Shapes.Counts {
    private Pattern pattern;

    @Override
    protected void setup(Context ctx) {
      pattern = Pattern.compile(ctx.getConfiguration().get("phaseline.grep.regex", "[0-9][0-9]"));
    }

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      Matcher m = pattern.matcher(value.toString());
      while (m.find()) {
        count(m.group(), ctx);
      }
    }
  }
}
