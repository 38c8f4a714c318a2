package phaseline.engine;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.conf.Configured;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.input.FixedLengthInputFormat;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.apache.hadoop.util.Tool;
import org.apache.hadoop.util.ToolRunner;

/**
 * Driver of the microbenchmark job MB = (M_inp, M_sel, N_map, N_red) of Zhang et al.
 * 2013, section 3: reads 100-byte records ({@link TeraRecordGen}), maps them with
 * {@link SelectivityMapper}, reduces with {@link IdentityReducer}, and writes the
 * records back with {@link RecordOutputFormat}; the reader, the map function's
 * collect and the writer time themselves ({@link PhaseNanos}).
 *
 * <p>Usage (the same jar runs on a real cluster):
 * {@code hadoop jar phaseline-engine.jar phaseline.engine.PhaselineBench
 * -D phaseline.bench.selectivity=1.4 -D mapreduce.job.reduces=5 IN_DIR OUT_DIR}.
 * The number of map tasks is the number of input splits: one per input file when
 * {@code mapreduce.input.fileinputformat.split.minsize} is at least the file size.
 */
public final class PhaselineBench extends Configured implements Tool {

  /** The job name, also the {@code app} recorded for engine runs. */
  public static final String JOB_NAME = "phaseline-bench";

  @Override
  public int run(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: PhaselineBench [-D key=value ...] IN_DIR OUT_DIR");
      return 2;
    }
    Configuration conf = getConf();
    FixedLengthInputFormat.setRecordLength(conf, TeraRecordGen.RECORD_BYTES);
    Job job = Job.getInstance(conf, JOB_NAME);
    job.setJarByClass(PhaselineBench.class);
    job.setInputFormatClass(TimedFixedLengthInputFormat.class);
    job.setMapperClass(SelectivityMapper.class);
    job.setReducerClass(IdentityReducer.class);
    job.setMapOutputKeyClass(Text.class);
    job.setMapOutputValueClass(Text.class);
    job.setOutputKeyClass(Text.class);
    job.setOutputValueClass(Text.class);
    job.setOutputFormatClass(RecordOutputFormat.class);
    FileInputFormat.addInputPath(job, new Path(args[0]));
    FileOutputFormat.setOutputPath(job, new Path(args[1]));
    return job.waitForCompletion(true) ? 0 : 1;
  }

  public static void main(String[] args) throws Exception {
    System.exit(ToolRunner.run(new Configuration(), new PhaselineBench(), args));
  }
}
