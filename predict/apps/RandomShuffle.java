package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Reducer;

/**
 * A random permutation of the input: every line under a pseudo-random int key drawn from its bytes
 * (a binary key with Hadoop's raw comparator), the whole line as the value; each reduce (Hadoop's
 * identity {@link Reducer}) writes its partition in key order, the lines in no order of their own.
 * Every record shuffled, map and reduce selectivity 1, the partitions even whatever the keys.
 *
 * <p>Usage: RandomShuffle INPUT OUTPUT REDUCES
 */
public final class RandomShuffle extends App {

  public RandomShuffle() {
    super("randomshuffle", Draw.class, null, Reducer.class, IntWritable.class, Text.class);
  }

  /** (line) -> (a key drawn from the line's bytes, line). */
  public static final class Draw extends Mapper<Object, Text, IntWritable, Text> {
    private final IntWritable k = new IntWritable();

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      k.set((int) mix(0x9E3779B97F4A7C15L, value.getBytes(), value.getLength(), 1));
      ctx.write(k, value);
    }
  }
}
