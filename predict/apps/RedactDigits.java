package phaseline.apps;

import java.io.IOException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.hadoop.io.NullWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;

/**
 * A map-only redaction (the shape of a masking pass before data leaves a team): every run of digits
 * of every record is replaced by '#' through a regular expression ({@link Matcher#replaceAll}), and
 * every record is written, no shorter than it came.  No reduce: the cost is the regular expression's,
 * per byte of input.  Run with REDUCES 0.
 *
 * <p>Usage: RedactDigits INPUT OUTPUT REDUCES
 */
public final class RedactDigits extends App {

  public RedactDigits() {
    super("redactdigits", Redact.class, null, null, Text.class, NullWritable.class);
  }

  /** (line) -> (line, every run of digits as '#'). */
  public static final class Redact extends Mapper<Object, Text, Text, NullWritable> {
    private static final Pattern DIGITS = Pattern.compile("[0-9]+");
    private final Matcher matcher = DIGITS.matcher("");
    private final Text out = new Text();

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      out.set(matcher.reset(value.toString()).replaceAll("#"));
      ctx.write(out, NullWritable.get());
    }
  }
}
