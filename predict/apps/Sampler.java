package phaseline.apps;

import org.apache.hadoop.io.Text;

/**
 * A sample: each map keeps the records whose key hashes to one in {@link #EVERY} (2 %) and the
 * reduce writes them in key order ({@link Sort.Emit}): the map reads everything, the shuffle and the
 * reduce see a fiftieth of it.
 *
 * <p>Usage: Sampler INPUT OUTPUT REDUCES
 */
public final class Sampler extends App {

  /** One record in this many is kept. */
  static final int EVERY = 50;

  public Sampler() {
    super("sampler", Sample.class, null, Sort.Emit.class, Text.class, Text.class);
  }

  /** (line) -> (key, rest of the line) for one key in {@link #EVERY}. */
  public static final class Sample extends Shapes.TextPair {
    @Override
    protected boolean read(Text line, Context ctx) {
      keyOf(line, k);
      if (Math.floorMod(k.hashCode(), EVERY) != 0) {
        return false;
      }
      valueOf(line, v);
      return true;
    }
  }
}
