package phaseline.apps;

import java.io.IOException;
import java.util.StringTokenizer;

import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.lib.reduce.IntSumReducer;

/**
 * Word count with a combiner: every whitespace-separated token of every line,
 * summed.  Backtest application 1 (phaseline backtest --suite local).
 *
 * <p>Usage: WordCount INPUT OUTPUT REDUCES
 */
public final class WordCount extends App {

  public WordCount() {
    super("wordcount", Tokens.class, IntSumReducer.class, IntSumReducer.class, Text.class, IntWritable.class);
  }

  /** Emits (token, 1) for every token. */
  public static final class Tokens extends Mapper<Object, Text, Text, IntWritable> {
    private static final IntWritable ONE = new IntWritable(1);
    private final Text word = new Text();

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      StringTokenizer it = new StringTokenizer(value.toString());
      while (it.hasMoreTokens()) {
        word.set(it.nextToken());
        ctx.write(word, ONE);
      }
    }
  }
}
