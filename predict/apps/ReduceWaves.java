package phaseline.apps;

import org.apache.hadoop.io.Text;

/**
 * Reduce waves: the sort application's map and reduce ({@link Sort}) run with
 * four reduces, more than the engine's reduce slots, so the reduces run in
 * waves.  A held-out configuration of a tuning application's code: what it
 * tests is the reduce waves, not new map or reduce work.
 *
 * <p>Usage: ReduceWaves INPUT OUTPUT REDUCES
 */
public final class ReduceWaves extends App {

  public ReduceWaves() {
    super("reducewaves", Sort.Split.class, null, Sort.Emit.class, Text.class, Text.class);
  }
}
