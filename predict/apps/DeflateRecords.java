package phaseline.apps;

import java.io.IOException;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

import org.apache.hadoop.io.BytesWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;

/**
 * Records compressed one by one: the map deflates each line (the JDK's zlib, level 6, a call into
 * native code a record) and shuffles the compressed bytes under the line's group; the reduce inflates
 * every value and writes per group its count, raw bytes and compressed bytes.
 *
 * <p>Usage: DeflateRecords INPUT OUTPUT REDUCES
 */
public final class DeflateRecords extends App {

  public DeflateRecords() {
    super("deflaterecords", Deflate.class, null, Inflate.class, Text.class, Text.class, BytesWritable.class);
  }

  /** (line) -> (group, the line deflated). */
  public static final class Deflate extends Mapper<Object, Text, Text, BytesWritable> {
    private final Deflater deflater = new Deflater(6);
    private final byte[] buf = new byte[4096];
    private final Text k = new Text();
    private final BytesWritable v = new BytesWritable();

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      deflater.reset();
      deflater.setInput(value.getBytes(), 0, value.getLength());
      deflater.finish();
      int n = deflater.deflate(buf);
      if (!deflater.finished()) {
        throw new IOException("a record deflates to more than " + buf.length + " bytes");
      }
      groupOf(value, k);
      v.set(buf, 0, n);
      ctx.write(k, v);
    }

    @Override
    protected void cleanup(Context ctx) {
      deflater.end();
    }
  }

  /** (group, deflated lines) -> (group, "count raw-bytes deflated-bytes"). */
  public static final class Inflate extends Shapes.Summary<BytesWritable> {
    private final Inflater inflater = new Inflater();
    private final byte[] buf = new byte[4096];

    @Override
    protected String summary(Iterable<BytesWritable> values) throws IOException {
      long count = 0;
      long raw = 0;
      long packed = 0;
      for (BytesWritable v : values) {
        inflater.reset();
        inflater.setInput(v.getBytes(), 0, v.getLength());
        try {
          raw += inflater.inflate(buf);
        } catch (DataFormatException e) {
          throw new IOException("a value that does not inflate", e);
        }
        packed += v.getLength();
        count++;
      }
      return count + " " + raw + " " + packed;
    }

    @Override
    protected void cleanup(Context ctx) {
      inflater.end();
    }
  }
}
