package phaseline.apps;

import java.io.IOException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.lib.reduce.LongSumReducer;

/**
 * Field extraction by a regular expression, the shape of a log-parsing job: each map runs
 * {@link #FIELDS} over every line and emits, for each run of two to four letters it finds, the run
 * lower-cased with a count of 1; a combiner and the reduce sum the counts ({@link LongSumReducer}).
 *
 * <p>Usage: RegexExtract INPUT OUTPUT REDUCES
 */
public final class RegexExtract extends App {

  /** What a field is: a run of two to four letters between non-letters. */
  static final Pattern FIELDS = Pattern.compile("(?<![A-Za-z])([A-Za-z]{2,4})(?![A-Za-z])");

  public RegexExtract() {
    super("regexextract", Fields.class, LongSumReducer.class, LongSumReducer.class, Text.class, LongWritable.class);
  }

  /** (line) -> (field, 1) for each field the pattern finds. */
  public static final class Fields extends Shapes.Counts {
    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      Matcher m = FIELDS.matcher(value.toString());
      while (m.find()) {
        count(m.group(1).toLowerCase(), ctx);
      }
    }
  }
}
