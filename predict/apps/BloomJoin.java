package phaseline.apps;

import java.nio.charset.StandardCharsets;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.util.bloom.BloomFilter;
import org.apache.hadoop.util.bloom.Key;
import org.apache.hadoop.util.hash.Hash;

/**
 * A semi-join by a Bloom filter: each map first builds Hadoop's {@link BloomFilter} of a dimension
 * table (every group, the key's first two characters, whose characters' codes sum to an even number,
 * with {@link #DECOYS} ten-character keys of no record), then keeps the records whose group the
 * filter holds (about half, and its false positives), shuffled under their group; the reduce counts
 * each group's records and their bytes ({@link NGrams.Count}, also {@link SkewedKey}'s reduce).
 *
 * <p>Usage: BloomJoin INPUT OUTPUT REDUCES
 */
public final class BloomJoin extends App {

  /** Keys of the dimension table that match no record (its bulk: what each map's set-up hashes). */
  static final int DECOYS = 200_000;
  /** The filter's bits and hash functions (Hadoop's murmur hash). */
  static final int BITS = 1 << 22;
  static final int HASHES = 6;

  public BloomJoin() {
    super("bloomjoin", Probe.class, null, NGrams.Count.class, Text.class, Text.class);
  }

  /** (line) -> (group, rest of the line) for the lines whose group the filter holds. */
  public static final class Probe extends Shapes.TextPair {
    private final BloomFilter filter = new BloomFilter(BITS, HASHES, Hash.MURMUR_HASH);
    private final Key probe = new Key();
    private final byte[] group = new byte[GROUP_BYTES];

    @Override
    protected void setup(Context ctx) {
      for (char a = ' '; a <= '~'; a++) {
        for (char b = ' '; b <= '~'; b++) {
          if ((a + b) % 2 == 0) {
            filter.add(new Key(new String(new char[] {a, b}).getBytes(StandardCharsets.US_ASCII)));
          }
        }
      }
      for (int i = 0; i < DECOYS; i++) {
        filter.add(new Key(String.format("%010d", i).getBytes(StandardCharsets.US_ASCII)));
      }
    }

    @Override
    protected boolean read(Text line, Context ctx) {
      if (line.getLength() < GROUP_BYTES) {
        return false;
      }
      System.arraycopy(line.getBytes(), 0, group, 0, GROUP_BYTES);
      probe.set(group, 1.0);
      if (!filter.membershipTest(probe)) {
        return false;
      }
      groupOf(line, k);
      valueOf(line, v);
      return true;
    }
  }
}
