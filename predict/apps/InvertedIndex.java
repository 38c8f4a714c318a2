package phaseline.apps;

import java.io.IOException;
import java.util.StringTokenizer;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.lib.input.FileSplit;

/**
 * Inverted index: for every token of a line, its two-character prefix as the
 * term and "file:offset" as the posting; a reduce writes each term with its
 * comma-separated posting list.  Backtest application 4.
 *
 * <p>Usage: InvertedIndex INPUT OUTPUT REDUCES
 */
public final class InvertedIndex extends App {

  public InvertedIndex() {
    super("invertedindex", Postings.class, null, Join.class, Text.class, Text.class);
  }

  /** (offset, line) -> (term, file:offset) per token. */
  public static final class Postings extends Shapes.TextOut {
    private String file = "?";

    @Override
    protected void setup(Context ctx) {
      if (ctx.getInputSplit() instanceof FileSplit) {
        file = ((FileSplit) ctx.getInputSplit()).getPath().getName();
      }
    }

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      v.set(file + ":" + key);
      StringTokenizer it = new StringTokenizer(value.toString());
      while (it.hasMoreTokens()) {
        String token = it.nextToken();
        k.set(token.substring(0, Math.min(2, token.length())));
        ctx.write(k, v);
      }
    }
  }

  /** Joins a term's postings. */
  public static final class Join extends Shapes.Joined {
    public Join() {
      super(',');
    }
  }
}
