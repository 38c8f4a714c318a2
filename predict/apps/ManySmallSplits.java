package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.reduce.LongSumReducer;

/**
 * Many small splits: a character-class histogram over input cut into 256 KiB
 * splits ({@code mapreduce.input.fileinputformat.split.maxsize}; {@code -D
 * phaseline.split.kb} changes it), so a job runs many short maps whose fixed
 * cost weighs as much as their data.  A combiner.
 *
 * <p>Usage: ManySmallSplits INPUT OUTPUT REDUCES
 */
public final class ManySmallSplits extends App {

  public ManySmallSplits() {
    super("manysplits", Classes.class, LongSumReducer.class, LongSumReducer.class, Text.class, LongWritable.class);
  }

  /** (line) -> (character class, count) per line. */
  public static final class Classes extends Mapper<Object, Text, Text, LongWritable> {
    private static final String[] NAMES = {"digit", "upper", "lower", "other"};
    private final Text name = new Text();
    private final LongWritable count = new LongWritable();

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      long[] c = new long[4];
      byte[] b = value.getBytes();
      for (int i = 0, n = value.getLength(); i < n; i++) {
        int x = b[i];
        c[x >= '0' && x <= '9' ? 0 : x >= 'A' && x <= 'Z' ? 1 : x >= 'a' && x <= 'z' ? 2 : 3]++;
      }
      for (int j = 0; j < 4; j++) {
        name.set(NAMES[j]);
        count.set(c[j]);
        ctx.write(name, count);
      }
    }
  }

  /** Cut the input into splits of {@code phaseline.split.kb} KiB (256 unless set), then read it as text. */
  @Override
  protected void configure(Job job, String[] args) throws Exception {
    long kb = job.getConfiguration().getLong("phaseline.split.kb", 256);
    job.getConfiguration().setLong(FileInputFormat.SPLIT_MAXSIZE, kb * 1024);
    super.configure(job, args);
  }
}
