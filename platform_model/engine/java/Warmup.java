package phaseline.engine;

import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.nio.file.Path;
import java.util.Locale;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.util.ToolRunner;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine's JVM warm-up, and what has to happen between it and the measured job.
 *
 * <p>LocalJobRunner runs every task of a job in one JVM; the first tasks of a fresh
 * JVM load the MapReduce classes and run interpreted until the JIT has compiled the
 * hot paths (the sort buffer's collect, the spill sort, the merge), and measure
 * 2-5 times slower than the later ones.  {@link #run} runs a small throwaway
 * {@link PhaselineBench} job first.  The log switch and the JFR start use reflection:
 * log4j-core and {@code jdk.jfr} are present where the engine runs (Java 17, the
 * pyspark jars) but not on the classpath a cluster compiles these sources against.
 */
final class Warmup {

  private static final Logger LOG = LoggerFactory.getLogger(Warmup.class);
  /** How long to wait for the warm-up job's LocalJobRunner thread to end. */
  private static final long JOIN_MS = 30_000;
  private static final String JOB_THREAD_CLASS = "org.apache.hadoop.mapred.LocalJobRunner$Job";
  /** JIT settling: poll the compilers' total time this often, until it stays put this many polls, at most this long. */
  private static final long JIT_POLL_MS = 100;
  private static final int JIT_QUIET_POLLS = 3;
  private static final long JIT_MAX_WAIT_MS = 5_000;
  /** The warm-up job's reduces at most: two partitions run the hashed path that any more do. */
  static final int WARMUP_MAX_REDUCES = 2;

  private Warmup() {
  }

  /**
   * Generate {@code records} records in {@code files} files under {@code dir} and run the
   * benchmark job on them; then, with {@code appArgs}, the driver {@code mainClass} on the
   * same input (its arguments name the warm-up input and output).
   */
  static void run(Configuration conf, String dir, long records, int files, long seed, String mainClass,
      String[] appArgs) throws Exception {
    long t0 = System.currentTimeMillis();
    org.apache.hadoop.fs.Path root = new org.apache.hadoop.fs.Path(dir);
    org.apache.hadoop.fs.Path in = new org.apache.hadoop.fs.Path(root, "input");
    org.apache.hadoop.fs.Path out = new org.apache.hadoop.fs.Path(root, "output");
    Configuration wconf = new Configuration(conf);
    long perFile = (records + files - 1) / files * TeraRecordGen.RECORD_BYTES;
    wconf.setLong("mapreduce.input.fileinputformat.split.minsize", perFile);
    // The job's kind of map output: none (map-only), one partition, or hashed partitions.  The measured
    // job's maps otherwise ran code the warm-up had not (HashPartitioner, spills of several partitions),
    // interpreted and then compiled in the task's thread: 2 reduces' maps measured 0.96-1.48 s against
    // 0.61-0.81 s for 1 reduce's (32 MiB, 2 maps, 2026-11-29).
    wconf.setInt("mapreduce.job.reduces", Math.min(conf.getInt("mapreduce.job.reduces", 1), WARMUP_MAX_REDUCES));
    if (wconf.get("phaseline.bench.selectivity") == null) {
      wconf.set("phaseline.bench.selectivity", "1.0");
    }
    TeraRecordGen.generate(wconf, in, records, files, seed ^ 0x5eedL);
    int rc = ToolRunner.run(wconf, new PhaselineBench(), new String[] {in.toString(), out.toString()});
    if (rc != 0) {
      throw new IOException("the warm-up job exited with " + rc);
    }
    if (appArgs != null) {
      Configuration aconf = new Configuration(conf);
      aconf.setLong("mapreduce.input.fileinputformat.split.minsize", perFile);
      rc = EngineLauncher.runDriver(aconf, mainClass, appArgs);
      if (rc != 0) {
        throw new IOException("the warm-up run of " + mainClass + " exited with " + rc);
      }
    }
    joinJobThreads();
    RecordingJobRunner.forgetJobs();
    FileSystem fs = root.getFileSystem(wconf);
    fs.delete(root, true);
    long settled = settleJit();
    LOG.info(String.format(Locale.ROOT, "Warm-up %s of %d records in %d files done in %d ms (JIT settled in %d ms)",
        appArgs == null ? "job" : "jobs (benchmark and " + mainClass + ")", records, files,
        System.currentTimeMillis() - t0, settled));
  }

  /**
   * Wait until the JIT compilers have drained the work the warm-up queued: on a busy machine
   * the compiler threads lag behind, and methods hot in the warm-up would otherwise still be
   * compiled (and run interpreted) during the measured job's first tasks.
   *
   * @return the milliseconds waited
   */
  private static long settleJit() throws InterruptedException {
    CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
    if (jit == null || !jit.isCompilationTimeMonitoringSupported()) {
      return 0;
    }
    long t0 = System.currentTimeMillis();
    long last = jit.getTotalCompilationTime();
    int quiet = 0;
    while (quiet < JIT_QUIET_POLLS && System.currentTimeMillis() - t0 < JIT_MAX_WAIT_MS) {
      Thread.sleep(JIT_POLL_MS);
      long now = jit.getTotalCompilationTime();
      quiet = now == last ? quiet + 1 : 0;
      last = now;
    }
    return System.currentTimeMillis() - t0;
  }

  /** Wait until LocalJobRunner's job threads (each job's driver thread) have ended: they log to the end. */
  private static void joinJobThreads() throws InterruptedException {
    long deadline = System.currentTimeMillis() + JOIN_MS;
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getClass().getName().equals(JOB_THREAD_CLASS)) {
        t.join(Math.max(1, deadline - System.currentTimeMillis()));
      }
    }
  }

  /** Point the log (log4j2's {@code ${sys:phaseline.log.file}}) at {@code logFile}: reconfigure log4j2. */
  static void switchLog(String logFile) throws ReflectiveOperationException {
    System.setProperty("phaseline.log.file", logFile);
    Class<?> configurator = Class.forName("org.apache.logging.log4j.core.config.Configurator");
    configurator.getMethod("reconfigure").invoke(null);
    LOG.info("Log of the measured job starts here (warm-up job done)");
  }

  /**
   * Start a JDK Flight Recorder recording with the settings file {@code settings}, dumped to
   * {@code file} on exit ({@code null}: a throwaway recording, never dumped), and wait until
   * the JIT compilations it set off have drained.
   *
   * @return the recording ({@code jdk.jfr.Recording}, reached by reflection)
   */
  static Object startRecording(Path file, Path settings) throws ReflectiveOperationException, InterruptedException {
    Class<?> configuration = Class.forName("jdk.jfr.Configuration");
    Object config = configuration.getMethod("create", Path.class).invoke(null, settings);
    Class<?> recording = Class.forName("jdk.jfr.Recording");
    Constructor<?> make = recording.getConstructor(configuration);
    Object rec = make.newInstance(config);
    Method setName = recording.getMethod("setName", String.class);
    setName.invoke(rec, file == null ? "phaseline-warmup" : "phaseline");
    if (file != null) {
      recording.getMethod("setDestination", Path.class).invoke(rec, file);
      recording.getMethod("setDumpOnExit", boolean.class).invoke(rec, true);
    }
    long t0 = System.currentTimeMillis();
    recording.getMethod("start").invoke(rec);
    long settled = settleJit();
    LOG.info(String.format(Locale.ROOT, "JFR recording %s started in %d ms (JIT settled in %d ms)",
        file == null ? "for the warm-up" : "of the run", System.currentTimeMillis() - t0, settled));
    return rec;
  }

  /** Close (discard) a recording that {@link #startRecording} returned. */
  static void closeRecording(Object rec) throws ReflectiveOperationException {
    rec.getClass().getMethod("close").invoke(rec);
  }
}
