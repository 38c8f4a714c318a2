package phaseline.engine;

import java.io.IOException;
import java.util.SplittableRandom;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.io.BytesWritable;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;

/**
 * The microbenchmark's map function: emits each input record according to the map
 * selectivity M_sel (Zhang et al. 2013, section 3: "the ratio of the map output to
 * the map input").
 *
 * <p>Each 100-byte record is split into its 10-byte key and 90-byte value and
 * written {@code floor(M_sel)} times, plus once more with probability
 * {@code M_sel - floor(M_sel)}, drawn from a {@link SplittableRandom} seeded with
 * the job seed and the task's partition number (so a re-run, or a retried attempt,
 * emits exactly the same records).  Expected output records per input record are
 * thus M_sel; M_sel = 0 emits nothing.  The time spent in {@code context.write}
 * (Zhang's collect phase) is counted into {@link PhaseNanos#COLLECT}.
 */
public final class SelectivityMapper extends Mapper<LongWritable, BytesWritable, Text, Text> {

  /** Configuration key of the map selectivity (a non-negative double). */
  public static final String SELECTIVITY = "phaseline.bench.selectivity";
  /** Configuration key of the seed for the fractional part. */
  public static final String SEED = "phaseline.bench.seed";

  private final Text key = new Text();
  private final Text value = new Text();
  private int whole;
  private double fraction;
  private SplittableRandom random;
  private long collectNanos;

  @Override
  protected void setup(Context context) {
    Configuration conf = context.getConfiguration();
    double selectivity = conf.getDouble(SELECTIVITY, 1.0);
    if (!(selectivity >= 0.0) || Double.isInfinite(selectivity)) {
      throw new IllegalArgumentException(SELECTIVITY + " must be a finite number >= 0, got " + selectivity);
    }
    whole = (int) Math.floor(selectivity);
    fraction = selectivity - whole;
    long seed = conf.getLong(SEED, 0L);
    int partition = context.getTaskAttemptID().getTaskID().getId();
    random = new SplittableRandom(seed * 1_000_003L + partition);
  }

  @Override
  protected void map(LongWritable offset, BytesWritable record, Context context)
      throws IOException, InterruptedException {
    byte[] bytes = record.getBytes();
    int length = record.getLength();
    int keyBytes = Math.min(TeraRecordGen.KEY_BYTES, length);
    key.set(bytes, 0, keyBytes);
    value.set(bytes, keyBytes, length - keyBytes);
    int copies = whole;
    if (fraction > 0.0 && random.nextDouble() < fraction) {
      copies++;
    }
    for (int i = 0; i < copies; i++) {
      long start = System.nanoTime();
      context.write(key, value);
      collectNanos += System.nanoTime() - start;
    }
  }

  @Override
  protected void cleanup(Context context) {
    context.getCounter(PhaseNanos.COLLECT).increment(collectNanos);
    collectNanos = 0;
  }
}
