package phaseline.apps;

import java.util.zip.CRC32;

import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;

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
  public static final class Checksum extends Shapes.GroupNumber {
    private final CRC32 crc = new CRC32();

    @Override
    protected long number(Text line) {
      crc.reset();
      crc.update(line.getBytes(), 0, line.getLength());
      return crc.getValue();
    }
  }

  /** (group, checksums) -> (group, their exclusive or). */
  public static final class Fold extends Shapes.LongFold {
    @Override
    protected long fold(Text group, long total, long value) {
      return total ^ value;
    }
  }
}
