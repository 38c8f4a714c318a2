package phaseline.apps;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Reducer;
import org.apache.hadoop.mapreduce.lib.input.MultipleInputs;
import org.apache.hadoop.mapreduce.lib.input.TextInputFormat;

/**
 * A reduce-side join of two inputs: the input directory's even-numbered files are
 * the "dimension" side, the odd-numbered ones the "fact" side, each read by its
 * own mapper ({@link MultipleInputs}) and tagged; both are keyed by the first two
 * characters of the record key; the reduce joins every fact record with the
 * first dimension record of its key (a foreign-key lookup).
 *
 * <p>Usage: ReduceSideJoin INPUT OUTPUT REDUCES
 */
public final class ReduceSideJoin extends App {

  public ReduceSideJoin() {
    super("join", null, null, Join.class, Text.class, Text.class);
  }

  /** (key prefix, tag + characters from..to of the record) for records of at least {@code min} characters. */
  private abstract static class Tagged extends Mapper<Object, Text, Text, Text> {
    private final Text k = new Text();
    private final Text v = new Text();
    private final int min;
    private final String tag;
    private final int from;
    private final int to;

    Tagged(int min, String tag, int from, int to) {
      this.min = min;
      this.tag = tag;
      this.from = from;
      this.to = to;
    }

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      String line = value.toString();
      if (line.length() < min) {
        return;
      }
      k.set(line.substring(0, 2));
      v.set(tag + line.substring(from, to < 0 ? line.length() : to));
      ctx.write(k, v);
    }
  }

  /** Dimension side: (key prefix, "D" + the record number). */
  public static final class Dimension extends Tagged {
    public Dimension() {
      super(43, "D", 11, 43);
    }
  }

  /** Fact side: (key prefix, "F" + the rest of the record). */
  public static final class Fact extends Tagged {
    public Fact() {
      super(10, "F", 2, -1);
    }
  }

  /** Joins each fact record with the key's first dimension record. */
  public static final class Join extends Reducer<Text, Text, Text, Text> {
    private final Text out = new Text();

    @Override
    protected void reduce(Text key, Iterable<Text> values, Context ctx) throws IOException, InterruptedException {
      String dim = null;
      List<String> early = new ArrayList<>();
      for (Text t : values) {
        String v = t.toString();
        if (v.charAt(0) == 'D') {
          if (dim == null) {
            dim = v.substring(1);
            for (String f : early) {
              out.set(f + "\t" + dim);
              ctx.write(key, out);
            }
            early.clear();
          }
        } else if (dim == null) {
          early.add(v.substring(1));
        } else {
          out.set(v.substring(1) + "\t" + dim);
          ctx.write(key, out);
        }
      }
    }
  }

  /** Each file of the input directory is a side: in name order, dimension, fact, dimension, ... */
  @Override
  @SuppressWarnings("rawtypes")
  protected void configure(Job job, String[] args) throws Exception {
    setClasses(job);
    Path input = new Path(args[0]);
    FileSystem fs = input.getFileSystem(job.getConfiguration());
    List<Path> files = dataFiles(fs, input);
    Collections.sort(files);
    int i = 0;
    for (Path f : files) {
      Class<? extends Mapper> side = i++ % 2 == 0 ? Dimension.class : Fact.class;
      MultipleInputs.addInputPath(job, f, TextInputFormat.class, side);
    }
  }
}
