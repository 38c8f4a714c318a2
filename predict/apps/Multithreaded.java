package phaseline.apps;

import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.lib.map.MultithreadedMapper;
import org.apache.hadoop.mapreduce.lib.reduce.LongSumReducer;

/**
 * A map task of two threads: Hadoop's {@link MultithreadedMapper} runs {@link Score} on two threads of
 * each map task, as jobs whose per-record work waits or computes do to use more of a node than one
 * task's thread.  Each record is hashed through {@link #ROUNDS} rounds of the 64-bit mix and emitted
 * as (group, 1) ({@link App#groupOf}), summed by a combiner and by the reduce ({@link LongSumReducer}).
 *
 * <p>Usage: Multithreaded INPUT OUTPUT REDUCES
 */
public final class Multithreaded extends App {

  /** Threads a map task runs {@link Score} on. */
  static final int THREADS = 2;
  /** Rounds of the mix a record takes. */
  static final int ROUNDS = 16;

  public Multithreaded() {
    super("multithreaded", MultithreadedMapper.class, LongSumReducer.class, LongSumReducer.class, Text.class,
        LongWritable.class);
  }

  @Override
  protected void configure(Job job, String[] args) throws Exception {
    super.configure(job, args);
    MultithreadedMapper.setMapperClass(job, Score.class);
    MultithreadedMapper.setNumberOfThreads(job, THREADS);
  }

  /** (line) -> (group, 1), after the mix (one instance a thread: its fields are its own). */
  public static final class Score extends MixCount {
    @Override
    protected int rounds() {
      return ROUNDS;
    }
  }
}
