package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.io.DoubleWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Reducer;
import org.apache.hadoop.mapreduce.lib.input.KeyValueLineRecordReader;
import org.apache.hadoop.mapreduce.lib.input.KeyValueTextInputFormat;

/**
 * A SQL-like aggregation (HiBench's {@code SELECT sourceIP, SUM(adRevenue) ... GROUP BY}): the input
 * read as key and value ({@link KeyValueTextInputFormat}, split at the first space: a key with a space
 * of its own is cut there), each record's
 * "revenue" parsed from its value as a decimal number (the record number's last eight hex digits,
 * scaled to cents) and summed as a double by the key's first three characters (up to 95^3 groups,
 * most of them a record or two at these sizes: the combiner keeps little), by a combiner and by the
 * reduce.
 *
 * <p>Usage: Aggregation INPUT OUTPUT REDUCES
 */
public final class Aggregation extends App {

  /** Characters of the key a record is grouped by. */
  static final int PREFIX = 3;

  public Aggregation() {
    super("aggregation", Revenue.class, Sum.class, Sum.class, Text.class, DoubleWritable.class);
  }

  @Override
  protected void configure(Job job, String[] args) throws Exception {
    super.configure(job, args);
    job.setInputFormatClass(KeyValueTextInputFormat.class);
    job.getConfiguration().set(KeyValueLineRecordReader.KEY_VALUE_SEPERATOR, " ");
  }

  /** (key, "number filler") -> (key's first characters, the number's last eight hex digits / 100). */
  public static final class Revenue extends Mapper<Text, Text, Text, DoubleWritable> {
    private final Text group = new Text();
    private final DoubleWritable revenue = new DoubleWritable();

    @Override
    protected void map(Text key, Text value, Context ctx) throws IOException, InterruptedException {
      String fields = value.toString();
      int end = fields.lastIndexOf(' ');  // before the filler (a key's own spaces come earlier)
      if (end < 8) {
        return;
      }
      revenue.set(Long.parseLong(fields.substring(end - 8, end), 16) / 100.0);
      group.set(key.getBytes(), 0, Math.min(PREFIX, key.getLength()));
      ctx.write(group, revenue);
    }
  }

  /** (group, revenues) -> (group, their sum): the combiner and the reduce. */
  public static final class Sum extends Reducer<Text, DoubleWritable, Text, DoubleWritable> {
    private final DoubleWritable total = new DoubleWritable();

    @Override
    protected void reduce(Text key, Iterable<DoubleWritable> values, Context ctx)
        throws IOException, InterruptedException {
      double sum = 0;
      for (DoubleWritable v : values) {
        sum += v.get();
      }
      total.set(sum);
      ctx.write(key, total);
    }
  }
}
