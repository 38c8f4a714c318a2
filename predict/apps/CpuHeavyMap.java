package phaseline.apps;

import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
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
  public static final class Score extends Shapes.GroupNumber {
    private int rounds;

    @Override
    protected void setup(Context ctx) {
      rounds = ctx.getConfiguration().getInt(CPU_ROUNDS, 64);
    }

    @Override
    protected long number(Text line) {
      return mix(0x9E3779B97F4A7C15L, line.getBytes(), line.getLength(), rounds) & 0xFFFF;
    }
  }
}
