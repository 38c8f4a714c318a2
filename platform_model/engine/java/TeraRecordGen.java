package phaseline.engine;

import java.io.IOException;
import java.io.OutputStream;
import java.util.SplittableRandom;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.conf.Configured;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.util.Tool;
import org.apache.hadoop.util.ToolRunner;

/**
 * A TeraGen-like input generator: fixed 100-byte records, seeded and reproducible.
 *
 * <p>Record layout (ASCII, like {@code gensort -a}, the format TeraGen's records
 * follow): bytes 0-9 the key, ten characters drawn uniformly from the 95 printable
 * ASCII characters; byte 10 a space; bytes 11-42 the global record number as 32
 * upper-case hex digits; byte 43 a space; bytes 44-97 filler, one letter repeated
 * (A..Z by record number); bytes 98-99 {@code "\r\n"}.  The key is the sort key, the
 * remaining 90 bytes are the value (Zhang et al. 2013, section 3: "100 byte key/value
 * pairs generated with TeraGen").
 *
 * <p>The records are spread over {@code files} files {@code part-m-NNNNN} as evenly
 * as possible, one file per intended map task.  File {@code i} draws its keys from a
 * {@link SplittableRandom} seeded with {@code (seed, i)}, so the same arguments
 * always give byte-identical files.  Unlike TeraGen this writes the files
 * sequentially from one process (inputs for microbenchmarks are small); on a real
 * cluster run it with {@code hadoop jar phaseline-engine.jar
 * phaseline.engine.TeraRecordGen OUT_DIR RECORDS FILES SEED}.
 */
public final class TeraRecordGen extends Configured implements Tool {

  /** Bytes per record. */
  public static final int RECORD_BYTES = 100;
  /** Bytes of the key at the start of a record. */
  public static final int KEY_BYTES = 10;

  private static final byte[] HEX = "0123456789ABCDEF".getBytes();

  /**
   * Write {@code records} records into {@code files} files under {@code dir}.
   *
   * @return the number of bytes written
   */
  public static long generate(Configuration conf, Path dir, long records, int files, long seed)
      throws IOException {
    if (records < 0 || files < 1) {
      throw new IllegalArgumentException("records must be >= 0 and files >= 1");
    }
    FileSystem fs = dir.getFileSystem(conf);
    fs.mkdirs(dir);
    long perFile = records / files;
    long extra = records % files;
    long row = 0;
    long written = 0;
    byte[] buf = new byte[RECORD_BYTES * 1024];
    for (int i = 0; i < files; i++) {
      long n = perFile + (i < extra ? 1 : 0);
      SplittableRandom rnd = new SplittableRandom(mix(seed, i));
      Path file = new Path(dir, String.format("part-m-%05d", i));
      try (OutputStream out = fs.create(file, true)) {
        int used = 0;
        for (long r = 0; r < n; r++, row++) {
          fill(buf, used, row, rnd);
          used += RECORD_BYTES;
          if (used == buf.length) {
            out.write(buf, 0, used);
            used = 0;
          }
        }
        out.write(buf, 0, used);
      }
      written += n * RECORD_BYTES;
    }
    return written;
  }

  private static long mix(long seed, int index) {
    long z = seed * 0x9E3779B97F4A7C15L + index;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  private static void fill(byte[] buf, int at, long row, SplittableRandom rnd) {
    for (int k = 0; k < KEY_BYTES; k++) {
      buf[at + k] = (byte) (' ' + rnd.nextInt(95));
    }
    buf[at + 10] = ' ';
    long v = row;
    for (int k = 42; k >= 11; k--) {
      buf[at + k] = HEX[(int) (v & 0xF)];
      v >>>= 4;
    }
    buf[at + 43] = ' ';
    byte filler = (byte) ('A' + (int) (row % 26));
    for (int k = 44; k < 98; k++) {
      buf[at + k] = filler;
    }
    buf[at + 98] = '\r';
    buf[at + 99] = '\n';
  }

  @Override
  public int run(String[] args) throws Exception {
    if (args.length != 4) {
      System.err.println("usage: TeraRecordGen OUT_DIR RECORDS FILES SEED");
      return 2;
    }
    long bytes = generate(getConf(), new Path(args[0]), Long.parseLong(args[1]),
        Integer.parseInt(args[2]), Long.parseLong(args[3]));
    System.out.println(bytes);
    return 0;
  }

  public static void main(String[] args) throws Exception {
    System.exit(ToolRunner.run(new Configuration(), new TeraRecordGen(), args));
  }
}
