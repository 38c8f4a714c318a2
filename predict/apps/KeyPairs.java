package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.lib.reduce.IntSumReducer;

/**
 * Co-occurrence counts in the "pairs" design (Lin and Dyer, Data-Intensive Text Processing with
 * MapReduce, section 3.2): every two adjacent characters of a record's key are one pair, written
 * (pair, 1) and summed by a combiner and the reduce.  Nine tiny map output records per input record
 * (a two-byte key and an int), collapsed by the combiner into at most 95 x 95 pairs a spill: the map
 * side pays per record, the shuffle carries little.
 *
 * <p>Usage: KeyPairs INPUT OUTPUT REDUCES
 */
public final class KeyPairs extends App {

  public KeyPairs() {
    super("keypairs", Pairs.class, IntSumReducer.class, IntSumReducer.class, Text.class, IntWritable.class);
  }

  /** (line) -> (two adjacent characters of its key, 1) for each of the key's nine pairs. */
  public static final class Pairs extends Mapper<Object, Text, Text, IntWritable> {
    private static final IntWritable ONE = new IntWritable(1);
    private final Text pair = new Text();

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      byte[] b = value.getBytes();
      int n = Math.min(KEY_BYTES, value.getLength());
      for (int i = 0; i + 1 < n; i++) {
        pair.set(b, i, 2);
        ctx.write(pair, ONE);
      }
    }
  }
}
