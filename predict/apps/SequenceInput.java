package phaseline.apps;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.SequenceFile;
import org.apache.hadoop.io.SequenceFile.CompressionType;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.io.compress.DefaultCodec;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.input.SequenceFileInputFormat;

/**
 * A pipeline's second job: its input is a block-compressed SequenceFile (zlib, Hadoop's
 * {@link DefaultCodec}) of (key, rest of the line) pairs, as a first job's {@link SequenceOutput}
 * would leave it; the driver writes one from each input file before the job (in the job's scratch
 * space: none of it is in the job's history).  The maps inflate each block and read the records as
 * Writables, Hadoop's identity map passes every one on and its identity reduce writes them in key
 * order.  No combiner.
 *
 * <p>Usage: SequenceInput INPUT OUTPUT REDUCES
 */
public final class SequenceInput extends App {

  public SequenceInput() {
    super("seqinput", Mapper.class, null, null, Text.class, Text.class);
  }

  @Override
  protected void configure(Job job, String[] args) throws Exception {
    setClasses(job);
    Configuration conf = job.getConfiguration();
    Text key = new Text();
    Text value = new Text();
    Path seq = rewriteInput(conf, "phaseline-seq-input", new Path(args[0]), (in, file, dir) -> {
      try (BufferedReader lines = new BufferedReader(new InputStreamReader(in.open(file), StandardCharsets.UTF_8));
          SequenceFile.Writer out = SequenceFile.createWriter(conf,
              SequenceFile.Writer.file(new Path(dir, file.getName() + ".seq")),
              SequenceFile.Writer.keyClass(Text.class), SequenceFile.Writer.valueClass(Text.class),
              SequenceFile.Writer.compression(CompressionType.BLOCK, new DefaultCodec()))) {
        for (String line = lines.readLine(); line != null; line = lines.readLine()) {
          Text whole = new Text(line);
          keyOf(whole, key);
          valueOf(whole, value);
          out.append(key, value);
        }
      }
    });
    job.setInputFormatClass(SequenceFileInputFormat.class);
    FileInputFormat.addInputPath(job, seq);
  }
}
