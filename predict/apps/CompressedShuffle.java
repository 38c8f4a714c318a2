package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.io.compress.CompressionCodec;
import org.apache.hadoop.io.compress.DefaultCodec;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Reducer;

/**
 * A compressed shuffle: every record goes to its group (the key's first
 * character) with the rest of the line, and the map output is compressed with
 * zlib ({@code mapreduce.map.output.compress}, Hadoop's DefaultCodec), so the
 * spills, the merge and the fetch move compressed bytes and pay to compress and
 * decompress them.  The reduce counts each group's records and distinct fillers.
 *
 * <p>Usage: CompressedShuffle INPUT OUTPUT REDUCES
 */
public final class CompressedShuffle extends App {

  public CompressedShuffle() {
    super("compressedshuffle", ByFirst.class, null, Tally.class, Text.class, Text.class);
  }

  @Override
  protected void configure(Job job, String[] args) throws Exception {
    super.configure(job, args);
    job.getConfiguration().setBoolean("mapreduce.map.output.compress", true);
    job.getConfiguration().setClass("mapreduce.map.output.compress.codec", DefaultCodec.class,
        CompressionCodec.class);
  }

  /** (line) -> (key's first character, rest of the line). */
  public static final class ByFirst extends Mapper<Object, Text, Text, Text> {
    private final Text group = new Text();
    private final Text rest = new Text();

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      if (value.getLength() == 0) {
        return;
      }
      group.set(value.getBytes(), 0, 1);
      valueOf(value, rest);
      ctx.write(group, rest);
    }
  }

  /** (group, values) -> (group, "records fillers"). */
  public static final class Tally extends Reducer<Text, Text, Text, Text> {
    private final Text out = new Text();

    @Override
    protected void reduce(Text key, Iterable<Text> values, Context ctx) throws IOException, InterruptedException {
      long records = 0;
      int fillers = 0;
      for (Text v : values) {
        records++;
        if (v.getLength() > 34) {
          fillers |= 1 << ((v.getBytes()[34] - 'A') & 31);
        }
      }
      out.set(records + " " + Integer.bitCount(fillers));
      ctx.write(key, out);
    }
  }
}
