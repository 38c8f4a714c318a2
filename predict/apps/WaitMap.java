package phaseline.apps;

import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.lib.reduce.LongSumReducer;

/**
 * A latency-bound map: every 25th record waits 1 ms, as a map that looks records up in an external
 * service (a database, a web API) waits on it, its core idle meanwhile.  Each map emits (group,
 * the record's length) per record ({@link App#groupOf}), summed by a combiner and by the reduce
 * ({@link LongSumReducer}).
 *
 * <p>Usage: WaitMap INPUT OUTPUT REDUCES
 */
public final class WaitMap extends App {

  /** Records between two waits of {@link #WAIT_MS}. */
  static final int RECORDS_PER_WAIT = 25;
  /** A wait, in milliseconds. */
  static final long WAIT_MS = 1;

  public WaitMap() {
    super("waitmap", Lookup.class, LongSumReducer.class, LongSumReducer.class, Text.class, LongWritable.class);
  }

  /** (line) -> (group, length), waiting on every {@link #RECORDS_PER_WAIT}th record. */
  public static final class Lookup extends Shapes.GroupNumber {
    private long records;

    @Override
    protected long number(Text line) throws InterruptedException {
      if (++records % RECORDS_PER_WAIT == 0) {
        Thread.sleep(WAIT_MS);
      }
      return line.getLength();
    }
  }
}
