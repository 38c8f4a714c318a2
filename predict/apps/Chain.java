package phaseline.apps;

import java.io.IOException;
import java.util.Locale;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.lib.chain.ChainMapper;
import org.apache.hadoop.mapreduce.lib.chain.ChainReducer;

/**
 * A chain of mappers around the reduce, in one job ({@link ChainMapper}, {@link ChainReducer}: what
 * a pipeline of small steps is folded into to save a job's start and its intermediate files): the
 * map splits each line into key and value ({@link Sort.Split}) and lower-cases the value; the reduce
 * writes each key's values joined by commas, and a mapper after it tags each line with its length.
 * Every record shuffled; no combiner.
 *
 * <p>Usage: Chain INPUT OUTPUT REDUCES
 */
public final class Chain extends App {

  public Chain() {
    super("chain", null, null, null, Text.class, Text.class);
  }

  @Override
  protected void configure(Job job, String[] args) throws Exception {
    super.configure(job, args);
    Configuration none = new Configuration(false);
    ChainMapper.addMapper(job, Sort.Split.class, LongWritable.class, Text.class, Text.class, Text.class, none);
    ChainMapper.addMapper(job, Lower.class, Text.class, Text.class, Text.class, Text.class, none);
    ChainReducer.setReducer(job, Joined.class, Text.class, Text.class, Text.class, Text.class, none);
    ChainReducer.addMapper(job, Tagged.class, Text.class, Text.class, Text.class, Text.class, none);
  }

  /** (key, value) -> (key, value lower-cased). */
  public static final class Lower extends Mapper<Text, Text, Text, Text> {
    private final Text v = new Text();

    @Override
    protected void map(Text key, Text value, Context ctx) throws IOException, InterruptedException {
      v.set(value.toString().toLowerCase(Locale.ROOT));
      ctx.write(key, v);
    }
  }

  /** (key, values) -> (key, the values joined by commas). */
  public static final class Joined extends Shapes.Joined {
    public Joined() {
      super(',');
    }
  }

  /** (key, value) -> (key, value's length, a tab, value). */
  public static final class Tagged extends Mapper<Text, Text, Text, Text> {
    private final Text v = new Text();

    @Override
    protected void map(Text key, Text value, Context ctx) throws IOException, InterruptedException {
      v.set(value.getLength() + "\t" + value);
      ctx.write(key, v);
    }
  }
}
