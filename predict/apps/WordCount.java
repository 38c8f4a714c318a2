package phaseline.apps;

import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.lib.map.TokenCounterMapper;
import org.apache.hadoop.mapreduce.lib.reduce.IntSumReducer;

/**
 * Word count with a combiner: every whitespace-separated token of every line,
 * summed.  Backtest application 1 (phaseline backtest --suite local).  The map
 * is Hadoop's {@link TokenCounterMapper}, (token, 1) for every token, and the
 * combiner and reduce its {@link IntSumReducer}.
 *
 * <p>Usage: WordCount INPUT OUTPUT REDUCES
 */
public final class WordCount extends App {

  public WordCount() {
    super("wordcount", TokenCounterMapper.class, IntSumReducer.class, IntSumReducer.class, Text.class,
        IntWritable.class);
  }
}
