package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.InputSplit;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.RecordReader;
import org.apache.hadoop.mapreduce.Reducer;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.input.LineRecordReader;
import org.apache.hadoop.mapreduce.lib.partition.InputSampler;
import org.apache.hadoop.mapreduce.lib.partition.TotalOrderPartitioner;

/**
 * A total-order sort (TeraSort's shape): before the job, the driver samples the input's keys
 * (Hadoop's {@link InputSampler.RandomSampler}: 1 % of the records, at most 1,000 keys from at most
 * 4 splits) into a partition file, and {@link TotalOrderPartitioner} sends each reduce one contiguous
 * range of keys, so the reduces' outputs one after the other are sorted.  The records are read as
 * (key, rest of the line) by an input format of its own (the sampler draws the keys the map emits);
 * the map and the reduce are Hadoop's identity classes.
 *
 * <p>Usage: TotalOrder INPUT OUTPUT REDUCES
 */
public final class TotalOrder extends App {

  /** The share of records the sampler takes, and the most keys and splits it samples. */
  static final double SAMPLE_FREQ = 0.01;
  static final int SAMPLE_KEYS = 1000;
  static final int SAMPLE_SPLITS = 4;

  public TotalOrder() {
    super("totalorder", Mapper.class, null, Reducer.class, Text.class, Text.class);
  }

  @Override
  protected void configure(Job job, String[] args) throws Exception {
    setClasses(job);
    job.setInputFormatClass(KeyedLines.class);
    FileInputFormat.addInputPath(job, new Path(args[0]));
    job.setNumReduceTasks(Integer.parseInt(args[2]));  // the partition file has one range a reduce
    TotalOrderPartitioner.setPartitionFile(job.getConfiguration(), new Path(args[1] + "-partitions"));
    InputSampler.writePartitionFile(job, new InputSampler.RandomSampler<Text, Text>(SAMPLE_FREQ, SAMPLE_KEYS,
        SAMPLE_SPLITS));
    job.setPartitionerClass(TotalOrderPartitioner.class);
  }

  /** Text input read as (the line's key, the rest of the line). */
  public static final class KeyedLines extends FileInputFormat<Text, Text> {
    @Override
    public RecordReader<Text, Text> createRecordReader(InputSplit split, TaskAttemptContext ctx) {
      return new Keyed();
    }
  }

  /** A {@link LineRecordReader}'s lines, each split into its key and the rest. */
  static final class Keyed extends RecordReader<Text, Text> {
    private final LineRecordReader lines = new LineRecordReader();
    private final Text key = new Text();
    private final Text value = new Text();

    @Override
    public void initialize(InputSplit split, TaskAttemptContext ctx) throws IOException {
      lines.initialize(split, ctx);
    }

    @Override
    public boolean nextKeyValue() throws IOException {
      if (!lines.nextKeyValue()) {
        return false;
      }
      keyOf(lines.getCurrentValue(), key);
      valueOf(lines.getCurrentValue(), value);
      return true;
    }

    @Override
    public Text getCurrentKey() {
      return key;
    }

    @Override
    public Text getCurrentValue() {
      return value;
    }

    @Override
    public float getProgress() throws IOException {
      return lines.getProgress();
    }

    @Override
    public void close() throws IOException {
      lines.close();
    }
  }
}
