package phaseline.apps;

import java.io.InputStream;
import java.io.OutputStream;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.IOUtils;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.io.compress.CompressionCodec;
import org.apache.hadoop.io.compress.GzipCodec;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.reduce.LongSumReducer;
import org.apache.hadoop.util.ReflectionUtils;

/**
 * Gzip-compressed input: before the job, the driver writes each input file again through Hadoop's
 * GzipCodec (in the job's scratch space), and the job reads those {@code .gz} files, which
 * TextInputFormat cannot split: a map a file, its reader inflating every byte (the shape of raw logs
 * kept compressed).  Each map counts its records by their group (the key's first two characters,
 * {@link CombinedSplits.Prefix}), summed by a combiner and by the reduce ({@link LongSumReducer}).
 * The copy is the driver's work, before the job is submitted: none of it is in the job's history.
 *
 * <p>Usage: GzipInput INPUT OUTPUT REDUCES
 */
public final class GzipInput extends App {

  public GzipInput() {
    super("gzipinput", CombinedSplits.Prefix.class, LongSumReducer.class, LongSumReducer.class, Text.class,
        LongWritable.class);
  }

  @Override
  protected void configure(Job job, String[] args) throws Exception {
    setClasses(job);
    Configuration conf = job.getConfiguration();
    CompressionCodec codec = ReflectionUtils.newInstance(GzipCodec.class, conf);
    Path gz = rewriteInput(conf, "phaseline-gzip-input", new Path(args[0]), (in, file, dir) -> {
      Path gzipped = new Path(dir, file.getName() + codec.getDefaultExtension());
      try (InputStream from = in.open(file);
          OutputStream to = codec.createOutputStream(gzipped.getFileSystem(conf).create(gzipped))) {
        IOUtils.copyBytes(from, to, 1 << 16);
      }
    });
    FileInputFormat.addInputPath(job, gz);
  }
}
