package phaseline.apps;

import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.lib.input.FileSplit;
import org.apache.hadoop.mapreduce.lib.reduce.LongSumReducer;

/**
 * Maps of two costs in one job: the maps of every other input file (by the number its name ends
 * in: part 0, 2, 4, ...) hash each record through 24 rounds of the 64-bit mix before counting it,
 * the others only count it (the shape of a union of two sources, one needing parsing the other
 * not).  Each map emits (group, 1) per record ({@link App#groupOf}), summed by a combiner and by
 * the reduce ({@link LongSumReducer}).  The job's average map is half cheap, half dear at every
 * size.
 *
 * <p>Usage: MixedMaps INPUT OUTPUT REDUCES
 */
public final class MixedMaps extends App {

  /** Rounds of the mix a record of a dear map takes. */
  static final int DEAR_ROUNDS = 24;

  public MixedMaps() {
    super("mixedmaps", Count.class, LongSumReducer.class, LongSumReducer.class, Text.class, LongWritable.class);
  }

  /** (line) -> (group, 1), after the mix on the dear files' maps. */
  public static final class Count extends MixCount {
    private int rounds;

    @Override
    protected void setup(Context ctx) {
      String name = ((FileSplit) ctx.getInputSplit()).getPath().getName();
      int i = name.length();
      while (i > 0 && Character.isDigit(name.charAt(i - 1))) {
        i--;
      }
      int number = i < name.length() ? Integer.parseInt(name.substring(i)) : 0;
      rounds = number % 2 == 0 ? DEAR_ROUNDS : 0;
    }

    @Override
    protected int rounds() {
      return rounds;
    }
  }
}
