package phaseline.engine;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.management.ManagementFactory;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapreduce.Counter;
import org.apache.hadoop.mapreduce.CounterGroup;
import org.apache.hadoop.mapreduce.Counters;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.util.Tool;
import org.apache.hadoop.util.ToolRunner;
import org.apache.hadoop.util.VersionInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one MapReduce driver in this JVM on Hadoop's LocalJobRunner and reports
 * what happened as JSON.
 *
 * <p>Usage: {@code EngineLauncher --run-dir DIR --result FILE --main CLASS
 * [--generate DIR --records N --files M --seed S]
 * [--warmup-dir DIR --warmup-records N --warmup-files M --log-file FILE [--warmup-arg A]...]
 * [--jfr FILE --jfr-settings FILE] -- ARGS...}.
 *
 * <p>With {@code --warmup-dir} a small throwaway {@link PhaselineBench} job runs first
 * in this JVM (its input generated under that directory, the job's reduces up to two, the same site
 * configuration), so that the measured job's tasks run on loaded classes and
 * JIT-compiled MapTask/ReduceTask code instead of paying for a cold JVM in its first
 * tasks.  The warm-up job is not part of the run: its log goes to the file that
 * {@code -Dphaseline.log.file} named at start-up, after it log4j2 is reconfigured to
 * write {@code --log-file}; its configuration is not copied into the run directory;
 * it is not in the report; and the JFR recording ({@code --jfr}) starts after it.
 * With {@code --warmup-arg} (repeated, the driver's arguments for the warm-up input and
 * output) the measured driver itself then runs once on the warm-up input too, so that
 * the application's own map and reduce code is compiled before its measured run; such a
 * driver must return rather than call {@code System.exit}.
 *
 * <p>The Hadoop
 * configuration comes from {@code core-site.xml}/{@code mapred-site.xml} first on
 * the classpath (the engine writes them), exactly as {@code hadoop jar} takes them
 * from {@code HADOOP_CONF_DIR}; a driver's {@code new Configuration()} sees them.
 * A driver implementing {@link Tool} runs through {@link ToolRunner}; any other
 * class has its {@code main(String[])} called, which may call
 * {@code Job.waitForCompletion} and even {@code System.exit}: the report is
 * then written from a shutdown hook.
 */
public final class EngineLauncher {

  private static final Logger LOG = LoggerFactory.getLogger(EngineLauncher.class);
  private static final AtomicBoolean REPORTED = new AtomicBoolean(false);

  private EngineLauncher() {
  }

  public static void main(String[] argv) throws Exception {
    LauncherOptions opts = new LauncherOptions(argv, new HashSet<>(Arrays.asList(
        "--run-dir", "--result", "--main", "--generate", "--records", "--files", "--seed", "--warmup-dir",
        "--warmup-records", "--warmup-files", "--log-file", "--warmup-arg", "--jfr", "--jfr-settings")));
    String runDir = opts.get("--run-dir");
    String result = opts.get("--result");
    String mainClass = opts.get("--main");
    String generate = opts.get("--generate");
    long records = opts.getLong("--records", 0);
    int files = opts.getInt("--files", 1);
    long seed = opts.getLong("--seed", 0);
    String warmupDir = opts.get("--warmup-dir");
    long warmupRecords = opts.getLong("--warmup-records", 0);
    int warmupFiles = opts.getInt("--warmup-files", 2);
    String logFile = opts.get("--log-file");
    List<String> warmupArgs = opts.all("--warmup-arg");
    String jfr = opts.get("--jfr");
    String jfrSettings = opts.get("--jfr-settings");
    List<String> rest = opts.rest();
    if (runDir == null || result == null || mainClass == null) {
      throw new IllegalArgumentException("--run-dir, --result and --main are required");
    }
    if (!warmupArgs.isEmpty() && warmupDir == null) {
      throw new IllegalArgumentException("--warmup-arg needs --warmup-dir");
    }
    if (warmupDir != null && logFile == null) {
      throw new IllegalArgumentException("--warmup-dir needs --log-file (the measured job's log)");
    }
    if ((jfr == null) != (jfrSettings == null)) {
      throw new IllegalArgumentException("--jfr and --jfr-settings go together");
    }
    new JobConf();  // registers mapred-default.xml and mapred-site.xml as default resources
    Configuration conf = new Configuration();

    final Report report = new Report(Paths.get(result), mainClass);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> report.write(true), "phaseline-report"));
    // With a warm-up, a throwaway recording with the same settings runs through it: enabling
    // JFR's file I/O events re-instruments the I/O classes and deoptimizes the code that uses
    // them (measured: the first map task after a recording starts spilled 4-10x slower), so
    // that cost is paid in the warm-up; the run's own recording then starts on warm code.
    Object warmupRecording = null;
    if (warmupDir != null && jfr != null) {
      warmupRecording = Warmup.startRecording(null, Paths.get(jfrSettings));
    }
    if (warmupDir != null) {
      try {
        String[] appArgs = warmupArgs.isEmpty() ? null : warmupArgs.toArray(new String[0]);
        Warmup.run(conf, warmupDir, warmupRecords, warmupFiles, seed, mainClass, appArgs);
        Warmup.switchLog(logFile);
      } catch (Exception | LinkageError e) {
        report.error = "warm-up job failed: " + stackTrace(e);
        LOG.error("Warm-up job failed", e);
        report.write(false);
        System.exit(1);
      }
    }
    // Only jobs submitted from here on are the run's (their conf lands in the run directory).
    System.setProperty(RecordingJobRunner.RUN_DIR_PROPERTY, runDir);
    if (jfr != null) {
      Warmup.startRecording(Paths.get(jfr), Paths.get(jfrSettings));
      if (warmupRecording != null) {
        Warmup.closeRecording(warmupRecording);  // after the run's own started: the settings stay on
      }
    }

    if (generate != null) {
      long t0 = System.currentTimeMillis();
      report.inputBytes = TeraRecordGen.generate(conf, new org.apache.hadoop.fs.Path(generate), records, files, seed);
      report.inputRecords = records;
      LOG.info("Generated " + records + " records (" + report.inputBytes + " bytes) in " + files
          + " files under " + generate + " in " + (System.currentTimeMillis() - t0) + " ms");
    }
    String[] args = rest.toArray(new String[0]);
    try {
      report.exitCode = runDriver(conf, mainClass, args);
    } catch (InvocationTargetException e) {
      report.error = stackTrace(e.getCause());
      LOG.error("Driver " + mainClass + " failed", e.getCause());
    } catch (Exception | LinkageError e) {
      report.error = stackTrace(e);
      LOG.error("Driver " + mainClass + " failed", e);
    }
    report.write(false);
    System.exit(report.error == null ? 0 : 1);
  }

  /**
   * Run a driver: a {@link Tool} through {@link ToolRunner} (its exit code), any other class
   * through its static {@code main(String[])} (0 when it returns).
   */
  static int runDriver(Configuration conf, String mainClass, String[] args) throws Exception {
    return runDriver(conf, Class.forName(mainClass), args);
  }

  /**
   * Run a driver from the job's jar ({@code mapreduce.job.jar}): a JVM that serves many runs (the
   * YARN launcher) has no application on its class path, so the driver, and the classes its job
   * names, load from the jar, as {@code hadoop jar} loads them (RunJar's class loader).
   */
  static int runDriverFromJar(Configuration conf, String mainClass, String[] args) throws Exception {
    String jar = conf.get("mapreduce.job.jar");
    if (jar == null) {
      return runDriver(conf, mainClass, args);
    }
    ClassLoader parent = Thread.currentThread().getContextClassLoader();
    try (java.net.URLClassLoader loader = new java.net.URLClassLoader(
        new java.net.URL[] {new java.io.File(jar).toURI().toURL()}, EngineLauncher.class.getClassLoader())) {
      conf.setClassLoader(loader);
      Thread.currentThread().setContextClassLoader(loader);
      return runDriver(conf, Class.forName(mainClass, true, loader), args);
    } finally {
      Thread.currentThread().setContextClassLoader(parent);
    }
  }

  private static int runDriver(Configuration conf, Class<?> cls, String[] args) throws Exception {
    String mainClass = cls.getName();
    if (Tool.class.isAssignableFrom(cls)) {
      Tool tool = (Tool) cls.getDeclaredConstructor().newInstance();
      return ToolRunner.run(conf, tool, args);
    }
    Method m = cls.getMethod("main", String[].class);
    if (!Modifier.isStatic(m.getModifiers())) {
      throw new IllegalArgumentException(mainClass + ".main is not static");
    }
    m.invoke(null, (Object) args);
    return 0;
  }

  private static String stackTrace(Throwable t) {
    StringWriter sw = new StringWriter();
    t.printStackTrace(new PrintWriter(sw));
    return sw.toString();
  }

  /** The JSON report the Python side turns into run.json. */
  static final class Report {
    final Path path;
    final String mainClass;
    volatile long inputBytes = -1;
    volatile long inputRecords = -1;
    volatile Integer exitCode;
    volatile String error;

    Report(Path path, String mainClass) {
      this.path = path;
      this.mainClass = mainClass;
    }

    void write(boolean fromShutdownHook) {
      if (!REPORTED.compareAndSet(false, true)) {
        return;
      }
      StringBuilder sb = new StringBuilder(4096);
      sb.append("{\"main_class\": ").append(str(mainClass));
      sb.append(", \"hadoop_version\": ").append(str(VersionInfo.getVersion()));
      sb.append(", \"java_version\": ").append(str(System.getProperty("java.version")));
      sb.append(", \"user\": ").append(str(currentUser()));
      // the JVM's own flags (-X...): what the run was measured under, as the JVM took them
      sb.append(", \"jvm_flags\": [");
      boolean firstFlag = true;
      for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
        if (arg.startsWith("-X")) {
          sb.append(firstFlag ? "" : ", ").append(str(arg));
          firstFlag = false;
        }
      }
      sb.append("]");
      sb.append(", \"exit_via_shutdown_hook\": ").append(fromShutdownHook);
      sb.append(", \"exit_code\": ").append(exitCode == null ? "null" : exitCode.toString());
      sb.append(", \"error\": ").append(str(error));
      sb.append(", \"input_bytes\": ").append(inputBytes < 0 ? "null" : Long.toString(inputBytes));
      sb.append(", \"input_records\": ").append(inputRecords < 0 ? "null" : Long.toString(inputRecords));
      sb.append(", \"jobs\": [");
      boolean first = true;
      for (RecordingJobRunner.Recorded rec : RecordingJobRunner.jobs()) {
        if (!first) {
          sb.append(", ");
        }
        first = false;
        appendJob(sb, rec);
      }
      sb.append("]}\n");
      try {
        Path tmp = path.resolveSibling(path.getFileName() + ".tmp");
        Files.write(tmp, sb.toString().getBytes(StandardCharsets.UTF_8));
        Files.move(tmp, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      } catch (IOException e) {
        System.err.println("phaseline: cannot write " + path + ": " + e);
      }
    }

    private static String currentUser() {
      try {
        return UserGroupInformation.getCurrentUser().getShortUserName();
      } catch (IOException e) {
        return System.getProperty("user.name");
      }
    }

    private static void appendJob(StringBuilder sb, RecordingJobRunner.Recorded rec) {
      JobStatus st = rec.runner.getJobStatus(rec.id);
      sb.append("{\"job_id\": ").append(str(rec.id.toString()));
      sb.append(", \"job_name\": ").append(str(rec.name));
      sb.append(", \"user\": ").append(str(rec.user));
      sb.append(", \"conf\": ").append(str(rec.confFile));
      sb.append(", \"state\": ").append(str(st == null ? null : st.getState().name()));
      sb.append(", \"failure_info\": ").append(str(st == null ? null : st.getFailureInfo()));
      sb.append(", \"submit_ms\": ").append(rec.submitMs);
      long start = st == null ? 0 : st.getStartTime();
      sb.append(", \"launch_ms\": ").append(start > 0 ? start : rec.launchMs);
      long finish = rec.finishMs();
      if (finish <= 0 && st != null && st.isJobComplete()) {
        finish = System.currentTimeMillis();  // completed since the watcher's last look
      }
      sb.append(", \"finish_ms\": ").append(finish > 0 ? Long.toString(finish) : "null");
      sb.append(", \"counters\": {");
      Counters counters = null;
      try {
        counters = rec.runner.getJobCounters(rec.id);
      } catch (RuntimeException e) {
        LOG.warn("No counters for " + rec.id + ": " + e);
      }
      if (counters != null) {
        boolean firstGroup = true;
        for (CounterGroup group : counters) {
          if (!firstGroup) {
            sb.append(", ");
          }
          firstGroup = false;
          sb.append(str(group.getName())).append(": {");
          boolean firstCounter = true;
          for (Counter c : group) {
            if (!firstCounter) {
              sb.append(", ");
            }
            firstCounter = false;
            sb.append(str(c.getName())).append(": ").append(c.getValue());
          }
          sb.append('}');
        }
      }
      sb.append("}}");
    }

    static String str(String s) {
      if (s == null) {
        return "null";
      }
      StringBuilder sb = new StringBuilder(s.length() + 2).append('"');
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        switch (c) {
          case '"': sb.append("\\\""); break;
          case '\\': sb.append("\\\\"); break;
          case '\n': sb.append("\\n"); break;
          case '\r': sb.append("\\r"); break;
          case '\t': sb.append("\\t"); break;
          default:
            if (c < 0x20) {
              sb.append(String.format("\\u%04x", (int) c));
            } else {
              sb.append(c);
            }
        }
      }
      return sb.append('"').toString();
    }
  }
}
