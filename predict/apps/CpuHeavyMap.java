package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.lib.reduce.LongSumReducer;

/**
 * CPU-heavy map: every record is hashed through many rounds of a 64-bit mix
 * (the shape of feature extraction or a similarity score), and only a small
 * (bucket, score) pair is emitted: the map function dominates, the shuffle is
 * small.  {@code -D phaseline.cpu.rounds=N} sets the rounds (default 64).
 *
 * <p>Usage: CpuHeavyMap INPUT OUTPUT REDUCES
 */
public final class CpuHeavyMap extends App {

  public CpuHeavyMap() {
    super("cpumap", Score.class, LongSumReducer.class, LongSumReducer.class, Text.class, LongWritable.class);
  }

  /** (line) -> (first two key bytes, mixed score). */
  public static final class Score extends Mapper<Object, Text, Text, LongWritable> {
    private final Text bucket = new Text();
    private final LongWritable score = new LongWritable();
    private int rounds;

    @Override
    protected void setup(Context ctx) {
      rounds = ctx.getConfiguration().getInt(CPU_ROUNDS, 64);
    }

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      byte[] b = value.getBytes();
      int n = value.getLength();
      long h = mix(0x9E3779B97F4A7C15L, b, n, rounds);
      groupOf(value, bucket);
      score.set(h & 0xFFFF);
      ctx.write(bucket, score);
    }
  }
}
