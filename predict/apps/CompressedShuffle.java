package phaseline.apps;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.io.compress.CompressionCodec;
import org.apache.hadoop.io.compress.DefaultCodec;
import org.apache.hadoop.mapreduce.Job;

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
  public static final class ByFirst extends Shapes.TextPair {
    @Override
    protected boolean read(Text line, Context ctx) {
      if (line.getLength() == 0) {
        return false;
      }
      k.set(line.getBytes(), 0, 1);
      valueOf(line, v);
      return true;
    }
  }

  /** (group, values) -> (group, "records fillers"). */
  public static final class Tally extends Shapes.Summary<Text> {
    @Override
    protected String summary(Iterable<Text> values) {
      long records = 0;
      int fillers = 0;
      for (Text v : values) {
        records++;
        if (v.getLength() > 34) {
          fillers |= 1 << ((v.getBytes()[34] - 'A') & 31);
        }
      }
      return records + " " + Integer.bitCount(fillers);
    }
  }
}
