package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Reducer;

/**
 * The mapper and reducer shapes several applications share, each written once: its fields, its
 * {@code map} or {@code reduce} and its write.  An application's nested class extends one and gives
 * the one step that is its own; it stays a public static class with a public no-argument constructor,
 * which Hadoop calls by reflection.
 */
public final class Shapes {

  private Shapes() {
  }

  /** A map from lines to records of text, written from the key {@link #k} and value {@link #v} it reuses. */
  public abstract static class TextOut extends Mapper<Object, Text, Text, Text> {
    /** The key and the value a record is written with. */
    protected final Text k = new Text();
    protected final Text v = new Text();
  }

  /**
   * (line) -> at most one (key, value) of text: {@link #read} sets {@link #k} and {@link #v} from the
   * line, or answers false to write nothing for it.
   */
  public abstract static class TextPair extends TextOut {
    /** Set {@link #k} and {@link #v} from {@code line}; false to write no record for it. */
    protected abstract boolean read(Text line, Context ctx) throws IOException, InterruptedException;

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      if (read(value, ctx)) {
        ctx.write(k, v);
      }
    }
  }

  /** (line) -> (group, a number of the line): its group ({@link App#groupOf}) and its {@link #number}. */
  public abstract static class GroupNumber extends Mapper<Object, Text, Text, LongWritable> {
    private final Text group = new Text();
    private final LongWritable number = new LongWritable();

    /** The number a line is written with. */
    protected abstract long number(Text line) throws IOException, InterruptedException;

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      number.set(number(value));
      App.groupOf(value, group);
      ctx.write(group, number);
    }
  }

  /** A map that counts: each {@link #count} writes (a key, 1), for a combiner and the reduce to sum. */
  public abstract static class Counts extends Mapper<Object, Text, Text, LongWritable> {
    private static final LongWritable ONE = new LongWritable(1);
    private final Text counted = new Text();

    /** Write ({@code key}, 1). */
    protected final void count(String key, Context ctx) throws IOException, InterruptedException {
      counted.set(key);
      ctx.write(counted, ONE);
    }
  }

  /** (key, numbers) -> (key, the numbers folded into a total from 0 by {@link #fold}). */
  public abstract static class LongFold extends Reducer<Text, LongWritable, Text, LongWritable> {
    private final LongWritable out = new LongWritable();

    /** {@code total} with {@code value}, one of {@code key}'s numbers, folded in. */
    protected abstract long fold(Text key, long total, long value);

    @Override
    protected void reduce(Text key, Iterable<LongWritable> values, Context ctx)
        throws IOException, InterruptedException {
      long total = 0;
      for (LongWritable v : values) {
        total = fold(key, total, v.get());
      }
      out.set(total);
      ctx.write(key, out);
    }
  }

  /** (key, values) -> (key, one line of text): the values' {@link #summary}. */
  public abstract static class Summary<V> extends Reducer<Text, V, Text, Text> {
    private final Text out = new Text();

    /** The line a key's values are written as. */
    protected abstract String summary(Iterable<V> values) throws IOException;

    @Override
    protected void reduce(Text key, Iterable<V> values, Context ctx) throws IOException, InterruptedException {
      out.set(summary(values));
      ctx.write(key, out);
    }
  }

  /** (key, values) -> (key, the values joined by a separator). */
  public abstract static class Joined extends Summary<Text> {
    private final StringBuilder all = new StringBuilder();
    private final char separator;

    /** Values joined by {@code separator}. */
    protected Joined(char separator) {
      this.separator = separator;
    }

    @Override
    protected String summary(Iterable<Text> values) {
      all.setLength(0);
      for (Text v : values) {
        if (all.length() > 0) {
          all.append(separator);
        }
        all.append(v);
      }
      return all.toString();
    }
  }
}
