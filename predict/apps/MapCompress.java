package phaseline.apps;

import org.apache.hadoop.io.SequenceFile.CompressionType;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.io.compress.DefaultCodec;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.apache.hadoop.mapreduce.lib.output.SequenceFileOutputFormat;

/**
 * Map-only, compressed on the map side: each line split into (key, rest of the line) by the sort
 * application's map ({@link Sort.Split}) and written straight from the map as a block-compressed
 * SequenceFile (zlib, Hadoop's {@link DefaultCodec}): the shape of an ingest job that converts raw
 * text into a pipeline's compressed container.  No reduce.
 *
 * <p>Usage: MapCompress INPUT OUTPUT REDUCES (REDUCES: 0)
 */
public final class MapCompress extends App {

  public MapCompress() {
    super("mapcompress", Sort.Split.class, null, null, Text.class, Text.class);
  }

  @Override
  protected void configure(Job job, String[] args) throws Exception {
    super.configure(job, args);
    job.setOutputFormatClass(SequenceFileOutputFormat.class);
    FileOutputFormat.setCompressOutput(job, true);
    FileOutputFormat.setOutputCompressorClass(job, DefaultCodec.class);
    SequenceFileOutputFormat.setOutputCompressionType(job, CompressionType.BLOCK);
  }
}
