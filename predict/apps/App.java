package phaseline.apps;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.conf.Configured;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Reducer;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.apache.hadoop.util.Tool;
import org.apache.hadoop.util.ToolRunner;

/**
 * Every backtest application's driver, written once: a {@link Tool} (the engine runs it through
 * {@link ToolRunner} with its own configuration) over the arguments INPUT OUTPUT REDUCES, running one
 * job named {@code phaseline app NAME} (the name the backtest suite matches its runs by).  An
 * application gives its name and classes to the constructor and, where its job needs more than text
 * input at INPUT, overrides {@link #configure}.
 *
 * <p>Usage: App APPLICATION INPUT OUTPUT REDUCES (APPLICATION: its class's simple name, e.g.
 * WordCount); the engine runs an application's own class.
 */
@SuppressWarnings("rawtypes")
public abstract class App extends Configured implements Tool {

  /** Bytes of a record's key: an input line is a TeraGen-like record, its first ten bytes the key. */
  protected static final int KEY_BYTES = 10;

  /** Bytes of a record's group: the grouping applications group a line by its key's first two bytes. */
  protected static final int GROUP_BYTES = 2;

  /** The setting of the rounds of {@link #mix} (each CPU-heavy application has its own default). */
  protected static final String CPU_ROUNDS = "phaseline.cpu.rounds";

  private final String name;
  /** Sets the job's classes: those given to the constructor. */
  private final Consumer<Job> classes;

  /**
   * An application's job: its mapper, combiner and reducer (null where the job has none) and its
   * output key and value classes (the map output's too).
   */
  protected App(String name, Class<? extends Mapper> mapper, Class<? extends Reducer> combiner,
      Class<? extends Reducer> reducer, Class<?> key, Class<?> value) {
    this(name, mapper, combiner, reducer, key, value, null);
  }

  /**
   * An application's job whose map output's values are of another class than its output's:
   * {@code mapValue} (null: the output's, as the other constructor).
   */
  protected App(String name, Class<? extends Mapper> mapper, Class<? extends Reducer> combiner,
      Class<? extends Reducer> reducer, Class<?> key, Class<?> value, Class<?> mapValue) {
    this.name = name;
    this.classes = job -> {
      if (mapper != null) {
        job.setMapperClass(mapper);
      }
      if (combiner != null) {
        job.setCombinerClass(combiner);
      }
      if (reducer != null) {
        job.setReducerClass(reducer);
      }
      job.setOutputKeyClass(key);
      job.setOutputValueClass(value);
      if (mapValue != null) {
        job.setMapOutputValueClass(mapValue);
      }
    };
  }

  /** Sets {@code key} to a line's key: its first {@link #KEY_BYTES} bytes (all of a shorter line). */
  protected static void keyOf(Text line, Text key) {
    key.set(line.getBytes(), 0, Math.min(KEY_BYTES, line.getLength()));
  }

  /** A line's key (see {@link #keyOf(Text, Text)}), as a string. */
  protected static String keyOf(String line) {
    return line.substring(0, Math.min(KEY_BYTES, line.length()));
  }

  /** Sets {@code group} to a line's group: its first {@link #GROUP_BYTES} bytes (all of a shorter line). */
  protected static void groupOf(Text line, Text group) {
    group.set(line.getBytes(), 0, Math.min(GROUP_BYTES, line.getLength()));
  }

  /** A line's group (see {@link #groupOf(Text, Text)}), as a string. */
  protected static String groupOf(String line) {
    return line.substring(0, Math.min(GROUP_BYTES, line.length()));
  }

  /** Sets {@code value} to the rest of a line after its key (empty for a line no longer than the key). */
  protected static void valueOf(Text line, Text value) {
    int n = line.getLength();
    int cut = Math.min(KEY_BYTES, n);
    value.set(line.getBytes(), cut, n - cut);
  }

  /**
   * {@code h} mixed with the bytes {@code b[0..n)} in {@code rounds} rounds of a 64-bit mix: the work of
   * the CPU-heavy applications, map-side ({@link CpuHeavyMap}) and reduce-side ({@link ReduceCpu}).
   */
  protected static long mix(long h, byte[] b, int n, int rounds) {
    for (int r = 0; r < rounds; r++) {
      for (int i = 0; i < n; i++) {
        h ^= b[i] + r;
        h *= 0xBF58476D1CE4E5B9L;
        h ^= h >>> 31;
      }
    }
    return h;
  }

  /**
   * (line) -> (group, 1) ({@link #groupOf}) after the line's bytes are mixed in {@link #rounds} rounds
   * ({@link #mix}); the mix's result is kept in a counter, so that it is not elided.  The map of the
   * applications whose records cost a number of rounds each and are counted by group ({@link MixedMaps},
   * {@link Multithreaded}).
   */
  protected abstract static class MixCount extends Mapper<Object, Text, Text, LongWritable> {
    private final Text group = new Text();
    private final LongWritable one = new LongWritable(1);
    private long sink;

    /** Rounds of the mix a record of this map takes. */
    protected abstract int rounds();

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      sink ^= mix(sink, value.getBytes(), value.getLength(), rounds());
      groupOf(value, group);
      ctx.write(group, one);
    }

    @Override
    protected void cleanup(Context ctx) {
      ctx.getCounter("phaseline", "mix").increment(sink & 1);
    }
  }

  /** The data files in directory {@code dir}: its files, but Hadoop's hidden ones (names from "_" or "."). */
  protected static List<Path> dataFiles(FileSystem fs, Path dir) throws IOException {
    List<Path> files = new ArrayList<>();
    for (FileStatus file : fs.listStatus(dir)) {
      String name = file.getPath().getName();
      if (file.isFile() && !name.startsWith("_") && !name.startsWith(".")) {
        files.add(file.getPath());
      }
    }
    return files;
  }

  /**
   * An empty directory {@code NAME/INPUT'S NAME} in the job's scratch space ({@code hadoop.tmp.dir}, not
   * beside its output: nothing a run leaves but its traces), for what a driver writes before the job.
   */
  protected static Path scratchDir(Configuration conf, String name, Path input) throws IOException {
    Path dir = new Path(conf.get("hadoop.tmp.dir"), name + "/" + input.getName());
    dir.getFileSystem(conf).delete(dir, true);
    return dir;
  }

  /** How {@link #rewriteInput} writes a data file again: {@code file}, of {@code in}, into {@code dir}. */
  protected interface Rewrite {
    void write(FileSystem in, Path file, Path dir) throws IOException;
  }

  /**
   * A scratch directory ({@link #scratchDir}, {@code name}) holding every data file of {@code input}
   * ({@link #dataFiles}) written again by {@code rewrite}: the input of a job that reads what another
   * job would have written before it.
   */
  protected static Path rewriteInput(Configuration conf, String name, Path input, Rewrite rewrite)
      throws IOException {
    Path dir = scratchDir(conf, name, input);
    FileSystem in = input.getFileSystem(conf);
    for (Path file : dataFiles(in, input)) {
      rewrite.write(in, file, dir);
    }
    return dir;
  }

  /** Set the job's classes, then read {@code args[0]} as text input (an override may read it otherwise). */
  protected void configure(Job job, String[] args) throws Exception {
    setClasses(job);
    FileInputFormat.addInputPath(job, new Path(args[0]));
  }

  /** The classes given to the constructor, on {@code job}. */
  protected final void setClasses(Job job) {
    classes.accept(job);
  }

  @Override
  public final int run(String[] args) throws Exception {
    if (args.length != 3) {
      System.err.println("usage: " + getClass().getSimpleName() + " INPUT OUTPUT REDUCES");
      return 2;
    }
    Job job = Job.getInstance(getConf(), "phaseline app " + name);
    job.setJarByClass(getClass());
    configure(job, args);
    job.setNumReduceTasks(Integer.parseInt(args[2]));
    FileOutputFormat.setOutputPath(job, new Path(args[1]));
    return job.waitForCompletion(true) ? 0 : 1;
  }

  /** Run the application named by the first argument on the rest (APPLICATION INPUT OUTPUT REDUCES). */
  public static void main(String[] args) throws Exception {
    if (args.length < 1) {
      System.err.println("usage: App APPLICATION INPUT OUTPUT REDUCES");
      System.exit(2);
    }
    Class<?> cls = Class.forName(App.class.getPackageName() + "." + args[0]);
    Tool app = (Tool) cls.getDeclaredConstructor().newInstance();
    System.exit(ToolRunner.run(app, Arrays.copyOfRange(args, 1, args.length)));
  }
}
