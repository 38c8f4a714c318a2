package phaseline.apps;

import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.lib.reduce.LongSumReducer;

/**
 * A CPU-heavy combiner: each record counts 1 for its group (the key's first two characters), and the
 * combiner, which sums them, also mixes every value it takes through rounds of {@link App#mix} (the
 * shape of a costly partial aggregate: a sketch, a model update), so the map's spills carry the
 * combiner's work.  The reduce sums ({@link LongSumReducer}); the output is the groups' counts,
 * whatever the spills.  {@code -D phaseline.cpu.rounds=N} sets the rounds (default 2048: over a
 * two-byte group, about the steps {@link CpuHeavyMap} takes over a whole line).
 *
 * <p>Usage: CpuCombiner INPUT OUTPUT REDUCES
 */
public final class CpuCombiner extends App {

  public CpuCombiner() {
    super("cpucombiner", One.class, CostlySum.class, LongSumReducer.class, Text.class, LongWritable.class);
  }

  /** (line) -> (group, 1). */
  public static final class One extends Shapes.GroupNumber {
    @Override
    protected long number(Text line) {
      return 1;
    }
  }

  /** (group, counts) -> (group, their sum), mixing every count through the rounds on the way. */
  public static final class CostlySum extends Shapes.LongFold {
    private int rounds;
    private long digest;

    @Override
    protected void setup(Context ctx) {
      rounds = ctx.getConfiguration().getInt(CPU_ROUNDS, 2048);
    }

    @Override
    protected long fold(Text key, long total, long value) {
      digest = mix(digest ^ value, key.getBytes(), key.getLength(), rounds);
      return total + value;
    }

    @Override
    protected void cleanup(Context ctx) {
      ctx.getCounter("phaseline", "combiner digest bit").increment(digest & 1);  // the work is kept
    }
  }
}
