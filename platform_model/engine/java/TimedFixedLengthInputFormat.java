package phaseline.engine;

import java.io.IOException;

import org.apache.hadoop.io.BytesWritable;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.mapreduce.InputSplit;
import org.apache.hadoop.mapreduce.RecordReader;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.input.FixedLengthInputFormat;

/**
 * Hadoop's {@link FixedLengthInputFormat} whose record reader counts the
 * nanoseconds spent in {@code nextKeyValue} into {@link PhaseNanos#READ}.
 */
public final class TimedFixedLengthInputFormat extends FixedLengthInputFormat {

  @Override
  public RecordReader<LongWritable, BytesWritable> createRecordReader(InputSplit split, TaskAttemptContext context)
      throws IOException, InterruptedException {
    return new Timed(super.createRecordReader(split, context));
  }

  private static final class Timed extends RecordReader<LongWritable, BytesWritable> {
    private final RecordReader<LongWritable, BytesWritable> inner;
    private TaskAttemptContext context;
    private long nanos;

    Timed(RecordReader<LongWritable, BytesWritable> inner) {
      this.inner = inner;
    }

    @Override
    public void initialize(InputSplit split, TaskAttemptContext context) throws IOException, InterruptedException {
      this.context = context;
      inner.initialize(split, context);
    }

    @Override
    public boolean nextKeyValue() throws IOException, InterruptedException {
      long start = System.nanoTime();
      try {
        return inner.nextKeyValue();
      } finally {
        nanos += System.nanoTime() - start;
      }
    }

    @Override
    public LongWritable getCurrentKey() throws IOException, InterruptedException {
      return inner.getCurrentKey();
    }

    @Override
    public BytesWritable getCurrentValue() throws IOException, InterruptedException {
      return inner.getCurrentValue();
    }

    @Override
    public float getProgress() throws IOException, InterruptedException {
      return inner.getProgress();
    }

    @Override
    public void close() throws IOException {
      inner.close();
      if (context != null) {
        context.getCounter(PhaseNanos.READ).increment(nanos);
        nanos = 0;
      }
    }
  }
}
