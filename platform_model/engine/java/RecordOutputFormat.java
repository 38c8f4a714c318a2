package phaseline.engine;

import java.io.IOException;

import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.RecordWriter;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;

/**
 * Writes each (key, value) as its raw bytes, key then value, with no separator:
 * the output has the same 100-byte record format as {@link TeraRecordGen}'s input
 * (as TeraSort's output format does), so reduce output bytes equal input bytes
 * times the selectivity.  The time spent writing (and closing the file) is counted
 * into {@link PhaseNanos#WRITE}.
 */
public final class RecordOutputFormat extends FileOutputFormat<Text, Text> {

  @Override
  public RecordWriter<Text, Text> getRecordWriter(TaskAttemptContext context) throws IOException {
    Path file = getDefaultWorkFile(context, "");
    final FSDataOutputStream out = file.getFileSystem(context.getConfiguration()).create(file, false);
    return new RecordWriter<Text, Text>() {
      private long nanos;

      @Override
      public void write(Text key, Text value) throws IOException {
        long start = System.nanoTime();
        out.write(key.getBytes(), 0, key.getLength());
        out.write(value.getBytes(), 0, value.getLength());
        nanos += System.nanoTime() - start;
      }

      @Override
      public void close(TaskAttemptContext closing) throws IOException {
        long start = System.nanoTime();
        out.close();
        nanos += System.nanoTime() - start;  // the last buffered bytes reach the file here
        closing.getCounter(PhaseNanos.WRITE).increment(nanos);
        nanos = 0;
      }
    };
  }
}
