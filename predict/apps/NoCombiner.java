package phaseline.apps;

import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.lib.map.TokenCounterMapper;
import org.apache.hadoop.mapreduce.lib.reduce.IntSumReducer;

/**
 * Word count without a combiner: the word count's map (Hadoop's {@link TokenCounterMapper}) and
 * sum, but every (token, 1) record is sorted, spilled and shuffled as the map wrote it, so the job
 * moves many small records where the word count moves a few summed ones.
 *
 * <p>Usage: NoCombiner INPUT OUTPUT REDUCES
 */
public final class NoCombiner extends App {

  public NoCombiner() {
    super("nocombiner", TokenCounterMapper.class, null, IntSumReducer.class, Text.class, IntWritable.class);
  }
}
