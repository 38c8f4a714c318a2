package phaseline.apps;

import java.io.IOException;
import java.util.zip.CRC32;

import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Reducer;

/**
 * An order-free checksum by group (the shape of a reconciliation job comparing two copies of a
 * table): every record's CRC-32 ({@link CRC32}) under its group, folded by exclusive or in a
 * combiner and the reduce, so that a map's output shrinks to one record a group.
 *
 * <p>Usage: CrcXor INPUT OUTPUT REDUCES
 */
public final class CrcXor extends App {

  public CrcXor() {
    super("crcxor", Checksum.class, Fold.class, Fold.class, Text.class, LongWritable.class);
  }

  /** (line) -> (group, CRC-32 of the line). */
  public static final class Checksum extends Mapper<Object, Text, Text, LongWritable> {
    private final CRC32 crc = new CRC32();
    private final Text group = new Text();
    private final LongWritable out = new LongWritable();

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      crc.reset();
      crc.update(value.getBytes(), 0, value.getLength());
      groupOf(value, group);
      out.set(crc.getValue());
      ctx.write(group, out);
    }
  }

  /** (group, checksums) -> (group, their exclusive or). */
  public static final class Fold extends Reducer<Text, LongWritable, Text, LongWritable> {
    private final LongWritable out = new LongWritable();

    @Override
    protected void reduce(Text group, Iterable<LongWritable> values, Context ctx)
        throws IOException, InterruptedException {
      long x = 0;
      for (LongWritable v : values) {
        x ^= v.get();
      }
      out.set(x);
      ctx.write(group, out);
    }
  }
}
