package phaseline.apps;

import java.util.function.Consumer;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;

/** The drivers' shared part: INPUT OUTPUT REDUCES arguments, text input, one job. */
final class Apps {

  private Apps() {
  }

  static int run(Configuration conf, String name, Class<?> main, String[] args, Consumer<Job> setup)
      throws Exception {
    if (args.length != 3) {
      System.err.println("usage: " + main.getSimpleName() + " INPUT OUTPUT REDUCES");
      return 2;
    }
    Job job = Job.getInstance(conf, name);
    job.setJarByClass(main);
    setup.accept(job);
    job.setNumReduceTasks(Integer.parseInt(args[2]));
    FileInputFormat.addInputPath(job, new Path(args[0]));
    FileOutputFormat.setOutputPath(job, new Path(args[1]));
    return job.waitForCompletion(true) ? 0 : 1;
  }
}
