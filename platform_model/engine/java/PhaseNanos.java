package phaseline.engine;

/**
 * The microbenchmark's own phase timers, as task counters (group
 * {@code phaseline.engine.PhaseNanos}): nanoseconds the task thread spent inside
 * the record reader's {@code nextKeyValue} ({@link #READ}), inside the map
 * function's {@code context.write}, i.e. partitioning, serializing and collecting
 * into the sort buffer ({@link #COLLECT}), and inside the record writer's
 * {@code write} ({@link #WRITE}).
 *
 * <p>Zhang et al. 2013 (section 2) time the read, collect and write phases with
 * instrumentation of Hadoop's code; these timers measure the same calls from the
 * job's side, so the phases are measured on a real cluster too, without a
 * profiler.  phaseline's task-log reader splits a map's {@code read+map+collect}
 * span and a reduce's {@code reduce+write} span by them. Each counter is
 * incremented once, when its reader, mapper or writer finishes.
 */
public enum PhaseNanos {
  READ,
  COLLECT,
  WRITE
}
