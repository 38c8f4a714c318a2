package phaseline.apps;

import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.lib.input.CombineTextInputFormat;
import org.apache.hadoop.mapreduce.lib.reduce.LongSumReducer;

/**
 * Small files combined: {@link CombineTextInputFormat} packs the input's files into splits of up to
 * 4 MiB, so a map reads two of the suite's 2 MiB files where every other application reads one (the
 * shape of Hive's combined input over many small files).  Each map counts its records by their key's
 * first two characters, summed by a combiner and by the reduce ({@link LongSumReducer}).
 *
 * <p>Usage: CombinedSplits INPUT OUTPUT REDUCES
 */
public final class CombinedSplits extends App {

  /** The largest split CombineTextInputFormat makes. */
  static final long MAX_SPLIT_BYTES = 4L << 20;

  public CombinedSplits() {
    super("combinedsplits", Prefix.class, LongSumReducer.class, LongSumReducer.class, Text.class,
        LongWritable.class);
  }

  @Override
  protected void configure(Job job, String[] args) throws Exception {
    super.configure(job, args);
    job.setInputFormatClass(CombineTextInputFormat.class);
    CombineTextInputFormat.setMaxInputSplitSize(job, MAX_SPLIT_BYTES);
  }

  /** (line) -> (its group, 1). */
  public static final class Prefix extends Shapes.GroupNumber {
    @Override
    protected long number(Text line) {
      return 1;
    }
  }
}
