package phaseline.apps;

import java.util.function.Consumer;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Reducer;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;

/** The drivers' shared part: INPUT OUTPUT REDUCES arguments, text input, one job. */
final class Apps {

  private Apps() {
  }

  /**
   * One job over text input: its mapper, combiner and reducer (null where the job has none) and its
   * output key and value classes (the map output's too).
   */
  @SuppressWarnings("rawtypes")
  static int run(Configuration conf, String name, Class<?> main, String[] args, Class<? extends Mapper> mapper,
      Class<? extends Reducer> combiner, Class<? extends Reducer> reducer, Class<?> key, Class<?> value)
      throws Exception {
    return run(conf, name, main, args, job -> {
      job.setMapperClass(mapper);
      if (combiner != null) {
        job.setCombinerClass(combiner);
      }
      if (reducer != null) {
        job.setReducerClass(reducer);
      }
      job.setOutputKeyClass(key);
      job.setOutputValueClass(value);
    });
  }

  /** One job over text input, set up by {@code setup}. */
  static int run(Configuration conf, String name, Class<?> main, String[] args, Consumer<Job> setup)
      throws Exception {
    return runJob(conf, name, main, args, job -> {
      setup.accept(job);
      FileInputFormat.addInputPath(job, new Path(args[0]));
    });
  }

  /** One job whose inputs {@code setup} adds itself (from {@code args[0]}). */
  static int runJob(Configuration conf, String name, Class<?> main, String[] args, JobSetup setup)
      throws Exception {
    if (args.length != 3) {
      System.err.println("usage: " + main.getSimpleName() + " INPUT OUTPUT REDUCES");
      return 2;
    }
    Job job = Job.getInstance(conf, name);
    job.setJarByClass(main);
    setup.accept(job);
    job.setNumReduceTasks(Integer.parseInt(args[2]));
    FileOutputFormat.setOutputPath(job, new Path(args[1]));
    return job.waitForCompletion(true) ? 0 : 1;
  }

  /** A job's set-up that may fail as Hadoop's file system calls do. */
  @FunctionalInterface
  interface JobSetup {
    void accept(Job job) throws Exception;
  }
}
