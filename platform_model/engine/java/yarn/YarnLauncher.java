package phaseline.engine;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.InvocationTargetException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.Cluster;
import org.apache.hadoop.mapreduce.Counter;
import org.apache.hadoop.mapreduce.CounterGroup;
import org.apache.hadoop.mapreduce.Counters;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.util.VersionInfo;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.api.records.LogAggregationStatus;
import org.apache.hadoop.yarn.api.records.YarnApplicationState;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.client.cli.LogsCLI;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;
import org.apache.hadoop.yarn.webapp.util.WebAppUtils;

/**
 * Starts Hadoop's {@link MiniMRYarnCluster} (ResourceManager, N NodeManagers with the
 * ShuffleHandler, JobHistoryServer, log aggregation; local file system, loopback) once
 * and runs MapReduce drivers on it, one at a time, as a user of a cluster would.
 *
 * <p>Usage: {@code YarnLauncher --work DIR --etc DIR --nodes N --containers C --container-mb M
 * [--rm-port P] [--conf FILE]}.  The process's standard output is its protocol (everything Hadoop
 * logs goes to log4j's file): once the cluster is up it prints {@code READY <json>}
 * (or {@code FAILED <one line>} and exits 1), then reads commands from standard input:
 * {@code RUN <spec.properties>} runs one driver and answers {@code DONE <result.json>};
 * {@code QUIT} (or the end of input) stops the cluster.
 *
 * <p>A run's spec names the run directory ({@code run.dir}), the result file, the driver
 * ({@code main}, {@code arg.0..}), optional records to generate first ({@code generate},
 * {@code records}, {@code files}, {@code seed}) and the job's settings ({@code conf.KEY}),
 * which go to {@code ETC/mapred-site.xml} (ETC is on the classpath) so that a driver's own
 * {@code new Configuration()} sees them.  For every application the driver submitted, the
 * run directory gets what a user collects from a cluster: the {@code .jhist} and
 * {@code _conf.xml} from the JobHistoryServer's done directory and the aggregated container
 * logs in the layout of {@code yarn logs -applicationId} ({@code logs/<app>.log}).
 */
public final class YarnLauncher {

  private static final long HISTORY_WAIT_MS = 120_000;
  private static final long POLL_MS = 100;

  private final Configuration clusterConf;
  private final Path etc;
  private final Path doneDir;
  private final YarnClient yarn;

  private YarnLauncher(Configuration clusterConf, Path etc, Path doneDir) throws Exception {
    this.clusterConf = clusterConf;
    this.etc = etc;
    this.doneDir = doneDir;
    org.apache.hadoop.yarn.webapp.util.WebServiceClient.initialize(clusterConf);  // as YarnCLI's main does
    this.yarn = YarnClient.createYarnClient();
    yarn.init(new YarnConfiguration(clusterConf));
    yarn.start();
  }

  public static void main(String[] argv) throws Exception {
    // Standard output is the protocol; Hadoop and drivers print to what System.out becomes.
    PrintStream proto = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
    LauncherOptions opts = new LauncherOptions(argv, new HashSet<>(Arrays.asList(
        "--work", "--etc", "--conf", "--nodes", "--containers", "--container-mb", "--rm-port")));
    String work = opts.get("--work");
    String etcDir = opts.get("--etc");
    String confFile = opts.get("--conf");
    int nodes = opts.getInt("--nodes", 1);
    int containers = opts.getInt("--containers", 2);
    int containerMb = opts.getInt("--container-mb", 512);
    int rmPort = opts.getInt("--rm-port", 0);
    if (work == null || etcDir == null) {
      throw new IllegalArgumentException("--work and --etc are required");
    }
    Path workDir = Paths.get(work).toAbsolutePath();
    PrintStream jvmOut = new PrintStream(new FileOutputStream(workDir.resolve("cluster.out").toFile(), true), true);
    System.setOut(jvmOut);
    System.setErr(jvmOut);

    YarnConfiguration conf = new YarnConfiguration();
    conf.set("yarn.nodemanager.resource.memory-mb", Integer.toString(containers * containerMb));
    // MiniYARNCluster gives each NodeManager this much memory (default 4096 MiB: 8 containers of
    // 512 MiB a node), whatever yarn.nodemanager.resource.memory-mb says.
    conf.set("yarn.minicluster.yarn.nodemanager.resource.memory-mb", Integer.toString(containers * containerMb));
    conf.set("yarn.nodemanager.resource.cpu-vcores", Integer.toString(containers));
    conf.set("yarn.scheduler.minimum-allocation-mb", Integer.toString(containerMb));
    conf.set("yarn.scheduler.maximum-allocation-mb", Integer.toString(containerMb));
    conf.set("yarn.scheduler.minimum-allocation-vcores", "1");
    conf.set("yarn.scheduler.maximum-allocation-vcores", "1");
    conf.set("yarn.app.mapreduce.am.resource.mb", Integer.toString(containerMb));
    conf.set("mapreduce.map.memory.mb", Integer.toString(containerMb));
    conf.set("mapreduce.reduce.memory.mb", Integer.toString(containerMb));
    conf.set("yarn.nodemanager.vmem-check-enabled", "false");
    conf.set("yarn.log-aggregation-enable", "true");
    conf.set("yarn.nodemanager.remote-app-log-dir", workDir.resolve("app-logs").toString());
    conf.set("yarn.app.mapreduce.am.staging-dir", workDir.resolve("staging").toString());
    Path done = workDir.resolve("history").resolve("done");
    conf.set("mapreduce.jobhistory.done-dir", done.toString());
    conf.set("mapreduce.jobhistory.intermediate-done-dir", workDir.resolve("history").resolve("done_intermediate").toString());
    conf.set("mapreduce.jobhistory.move.interval-ms", "200");
    // The job history in Hadoop's own default flavour (binary Avro since Hadoop 3), as a cluster writes it
    // (phaseline reads both: ingest/jhist_binary.py); a caller's -D mapreduce.jobhistory.jhist.format=json overrides.
    conf.set("hadoop.tmp.dir", workDir.resolve("tmp").toString());
    conf.set("fs.defaultFS", "file:///");
    if (rmPort > 0) {  // the ResourceManager's client port pinned; its other ports stay free ones
      String host = MiniYARNCluster.getHostname();
      conf.setBoolean(YarnConfiguration.YARN_MINICLUSTER_FIXED_PORTS, true);
      conf.set(YarnConfiguration.RM_ADDRESS, host + ":" + rmPort);
      conf.set(YarnConfiguration.RM_ADMIN_ADDRESS, host + ":0");
      conf.set(YarnConfiguration.RM_SCHEDULER_ADDRESS, host + ":0");
      conf.set(YarnConfiguration.RM_RESOURCE_TRACKER_ADDRESS, host + ":0");
      WebAppUtils.setRMWebAppHostnameAndPort(conf, host, 0);
    }
    if (confFile != null) {  // the caller's settings for the cluster override these
      Properties extra = new Properties();
      try (InputStream in = Files.newInputStream(Paths.get(confFile))) {
        extra.load(in);
      }
      for (String key : extra.stringPropertyNames()) {
        conf.set(key, extra.getProperty(key));
      }
    }
    // The cluster's services start in threads of their own and report only "failed to start": keep
    // what ended such a thread (a port in use, ...) to name the cause.
    final List<Throwable> died = java.util.Collections.synchronizedList(new ArrayList<>());
    Thread.setDefaultUncaughtExceptionHandler((thread, e) -> {
      died.add(e);
      e.printStackTrace();
    });
    final MiniMRYarnCluster cluster = new MiniMRYarnCluster("phaseline-yarn", nodes);
    Runtime.getRuntime().addShutdownHook(new Thread(cluster::stop, "phaseline-yarn-stop"));
    long t0 = System.currentTimeMillis();
    YarnLauncher launcher;
    try {
      cluster.init(conf);
      cluster.start();
      Configuration started = new Configuration(cluster.getConfig());
      waitForNodes(started, nodes);
      Path etc = Paths.get(etcDir);
      writeXml(started, etc.resolve("core-site.xml"));
      writeXml(started, etc.resolve("yarn-site.xml"));
      launcher = new YarnLauncher(started, etc, done);
    } catch (Throwable e) {
      e.printStackTrace();
      Throwable cause = e;
      synchronized (died) {
        for (Throwable d : died) {
          if (bindFailure(d) != null) {
            cause = d;
          }
        }
      }
      java.net.BindException bind = bindFailure(cause);
      proto.println("FAILED " + (bind != null ? "a port is in use: " + oneLine(bind) : oneLine(cause)));
      cluster.stop();
      System.exit(1);
      return;
    }
    long t1 = System.currentTimeMillis();
    Configuration c = cluster.getConfig();
    proto.println("READY {\"start_ms\": " + t0 + ", \"ready_ms\": " + t1
        + ", \"resourcemanager\": " + EngineLauncher.Report.str(c.get("yarn.resourcemanager.address"))
        + ", \"history_server\": " + EngineLauncher.Report.str(c.get("mapreduce.jobhistory.address"))
        + ", \"hadoop_version\": " + EngineLauncher.Report.str(VersionInfo.getVersion()) + "}");

    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      line = line.trim();
      if (line.equals("QUIT")) {
        break;
      }
      if (line.startsWith("RUN ")) {
        String result = launcher.run(Paths.get(line.substring(4).trim()));
        proto.println("DONE " + result);
      } else if (!line.isEmpty()) {
        proto.println("ERROR unknown command " + line);
      }
    }
    launcher.yarn.stop();
    cluster.stop();
    proto.println("STOPPED");
    System.exit(0);
  }

  /** Wait until every NodeManager has registered with the ResourceManager. */
  private static void waitForNodes(Configuration conf, int nodes) throws Exception {
    YarnClient client = YarnClient.createYarnClient();
    client.init(new YarnConfiguration(conf));
    client.start();
    try {
      long deadline = System.currentTimeMillis() + 60_000;
      while (client.getYarnClusterMetrics().getNumNodeManagers() < nodes) {
        if (System.currentTimeMillis() > deadline) {
          throw new IOException("only " + client.getYarnClusterMetrics().getNumNodeManagers() + " of " + nodes
              + " NodeManagers registered in 60 s");
        }
        Thread.sleep(POLL_MS);
      }
    } finally {
      client.stop();
    }
  }

  /** Run one spec; return the path of its result JSON. */
  private String run(Path specFile) throws IOException {
    Properties spec = new Properties();
    try (InputStream in = Files.newInputStream(specFile)) {
      spec.load(in);
    }
    Path runDir = Paths.get(spec.getProperty("run.dir"));
    Path result = Paths.get(spec.getProperty("result"));
    String mainClass = spec.getProperty("main");
    StringBuilder sb = new StringBuilder(4096);
    String error = null;
    long inputBytes = -1;
    long inputRecords = -1;
    Integer exitCode = null;
    List<ApplicationReport> apps = new ArrayList<>();
    List<String> jobs = new ArrayList<>();
    try {
      Configuration jobSettings = new Configuration(false);
      for (String key : new TreeMap<>(spec).keySet().stream().map(Object::toString).toArray(String[]::new)) {
        if (key.startsWith("conf.")) {
          jobSettings.set(key.substring(5), spec.getProperty(key));
        }
      }
      writeXml(jobSettings, etc.resolve("mapred-site.xml"));
      Configuration conf = new Configuration(clusterConf);
      for (java.util.Map.Entry<String, String> e : jobSettings) {
        conf.set(e.getKey(), e.getValue());
      }
      Set<ApplicationId> before = new HashSet<>();
      for (ApplicationReport r : yarn.getApplications()) {
        before.add(r.getApplicationId());
      }
      if (spec.getProperty("generate") != null) {
        inputRecords = Long.parseLong(spec.getProperty("records"));
        inputBytes = TeraRecordGen.generate(conf, new org.apache.hadoop.fs.Path(spec.getProperty("generate")),
            inputRecords, Integer.parseInt(spec.getProperty("files")), Long.parseLong(spec.getProperty("seed")));
      }
      List<String> args = new ArrayList<>();
      for (int i = 0; spec.getProperty("arg." + i) != null; i++) {
        args.add(spec.getProperty("arg." + i));
      }
      try {
        exitCode = EngineLauncher.runDriverFromJar(conf, mainClass, args.toArray(new String[0]));
      } catch (InvocationTargetException e) {
        error = stackTrace(e.getCause());
      } catch (Exception | LinkageError e) {
        error = stackTrace(e);
      }
      for (ApplicationReport r : yarn.getApplications()) {
        if (!before.contains(r.getApplicationId())) {
          apps.add(r);
        }
      }
      apps.sort((a, b) -> a.getApplicationId().compareTo(b.getApplicationId()));
      Files.createDirectories(runDir.resolve("logs"));
      for (ApplicationReport app : apps) {
        jobs.add(collect(app.getApplicationId(), runDir, conf));
      }
    } catch (Exception | LinkageError e) {
      error = (error == null ? "" : error + "\n") + stackTrace(e);
    }
    sb.append("{\"main_class\": ").append(EngineLauncher.Report.str(mainClass));
    sb.append(", \"hadoop_version\": ").append(EngineLauncher.Report.str(VersionInfo.getVersion()));
    sb.append(", \"java_version\": ").append(EngineLauncher.Report.str(System.getProperty("java.version")));
    sb.append(", \"user\": ").append(EngineLauncher.Report.str(UserGroupInformation.getCurrentUser().getShortUserName()));
    sb.append(", \"exit_code\": ").append(exitCode == null ? "null" : exitCode.toString());
    sb.append(", \"error\": ").append(EngineLauncher.Report.str(error));
    sb.append(", \"input_bytes\": ").append(inputBytes < 0 ? "null" : Long.toString(inputBytes));
    sb.append(", \"input_records\": ").append(inputRecords < 0 ? "null" : Long.toString(inputRecords));
    sb.append(", \"jobs\": [").append(String.join(", ", jobs)).append("]}\n");
    Path tmp = result.resolveSibling(result.getFileName() + ".tmp");
    Files.write(tmp, sb.toString().getBytes(StandardCharsets.UTF_8));
    Files.move(tmp, result, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    return result.toString();
  }

  /** Wait for an application's end, its history files and its aggregated logs; copy them; its JSON. */
  private String collect(ApplicationId appId, Path runDir, Configuration conf) throws Exception {
    long deadline = System.currentTimeMillis() + HISTORY_WAIT_MS;
    ApplicationReport app = yarn.getApplicationReport(appId);
    EnumSet<YarnApplicationState> ended =
        EnumSet.of(YarnApplicationState.FINISHED, YarnApplicationState.FAILED, YarnApplicationState.KILLED);
    EnumSet<LogAggregationStatus> aggregated = EnumSet.of(LogAggregationStatus.SUCCEEDED,
        LogAggregationStatus.FAILED, LogAggregationStatus.TIME_OUT, LogAggregationStatus.DISABLED);
    while (!ended.contains(app.getYarnApplicationState()) || !aggregated.contains(app.getLogAggregationStatus())) {
      if (System.currentTimeMillis() > deadline) {
        throw new IOException(appId + " still " + app.getYarnApplicationState() + ", log aggregation "
            + app.getLogAggregationStatus() + " after " + HISTORY_WAIT_MS / 1000 + " s");
      }
      Thread.sleep(POLL_MS);
      app = yarn.getApplicationReport(appId);
    }
    JobID jobId = JobID.forName(appId.toString().replace("application_", "job_"));
    // The job as the client sees it once it is over: from the JobHistoryServer.
    String jobName = app.getName();
    String user = app.getUser();
    String state = app.getFinalApplicationStatus().name();
    String failure = app.getDiagnostics();
    long launchMs = app.getStartTime();
    long finishMs = app.getFinishTime();
    Counters counters = null;
    Cluster cluster = new Cluster(conf);
    try {
      Job job = cluster.getJob(jobId);
      if (job != null) {
        JobStatus st = job.getStatus();
        state = st.getState().name();
        failure = st.getFailureInfo();
        launchMs = st.getStartTime() > 0 ? st.getStartTime() : launchMs;
        finishMs = st.getFinishTime() > 0 ? st.getFinishTime() : finishMs;
        counters = job.getCounters();
      }
    } finally {
      cluster.close();
    }
    // The history server moves the job's files from the intermediate to the done directory.
    Path jhist = null;
    Path jobConf = null;
    while (jhist == null || jobConf == null) {
      if (System.currentTimeMillis() > deadline) {
        throw new IOException("the history server did not move " + jobId + "'s .jhist and _conf.xml into "
            + doneDir + " in " + HISTORY_WAIT_MS / 1000 + " s");
      }
      try (Stream<Path> files = Files.walk(doneDir)) {
        for (Path p : (Iterable<Path>) files::iterator) {
          String name = p.getFileName().toString();
          if (name.startsWith(jobId + "-") && name.endsWith(".jhist")) {
            jhist = p;
          } else if (name.equals(jobId + "_conf.xml")) {
            jobConf = p;
          }
        }
      } catch (java.nio.file.NoSuchFileException e) {
        // not made yet
      }
      if (jhist == null || jobConf == null) {
        Thread.sleep(POLL_MS);
      }
    }
    Files.copy(jhist, runDir.resolve(jhist.getFileName()), StandardCopyOption.REPLACE_EXISTING);
    Files.copy(jobConf, runDir.resolve(jobConf.getFileName()), StandardCopyOption.REPLACE_EXISTING);
    String logName = "logs/" + appId + ".log";
    writeLogs(appId, conf, runDir.resolve(logName));

    StringBuilder sb = new StringBuilder(4096);
    sb.append("{\"job_id\": ").append(EngineLauncher.Report.str(jobId.toString()));
    sb.append(", \"application_id\": ").append(EngineLauncher.Report.str(appId.toString()));
    sb.append(", \"job_name\": ").append(EngineLauncher.Report.str(jobName));
    sb.append(", \"user\": ").append(EngineLauncher.Report.str(user));
    sb.append(", \"conf\": ").append(EngineLauncher.Report.str(jobConf.getFileName().toString()));
    sb.append(", \"jhist\": ").append(EngineLauncher.Report.str(jhist.getFileName().toString()));
    sb.append(", \"log\": ").append(EngineLauncher.Report.str(logName));
    sb.append(", \"state\": ").append(EngineLauncher.Report.str(state));
    sb.append(", \"failure_info\": ").append(EngineLauncher.Report.str(failure == null || failure.isEmpty() ? null : failure));
    // The done file's name (job-submit-user-name-finish-maps-reduces-status-queue-start) has the
    // history's own submit time; the ResourceManager's report leaves it 0.
    long submitMs = app.getSubmitTime();
    String[] parts = jhist.getFileName().toString().split("-");
    if (submitMs <= 0 && parts.length > 1 && parts[1].matches("\\d+")) {
      submitMs = Long.parseLong(parts[1]);
    }
    sb.append(", \"submit_ms\": ").append(submitMs > 0 ? submitMs : launchMs);
    sb.append(", \"launch_ms\": ").append(launchMs);
    sb.append(", \"finish_ms\": ").append(finishMs > 0 ? Long.toString(finishMs) : "null");
    sb.append(", \"counters\": {");
    if (counters != null) {
      boolean firstGroup = true;
      for (CounterGroup group : counters) {
        sb.append(firstGroup ? "" : ", ").append(EngineLauncher.Report.str(group.getName())).append(": {");
        firstGroup = false;
        boolean first = true;
        for (Counter c : group) {
          sb.append(first ? "" : ", ").append(EngineLauncher.Report.str(c.getName())).append(": ").append(c.getValue());
          first = false;
        }
        sb.append('}');
      }
    }
    return sb.append("}}").toString();
  }

  /** {@code yarn logs -applicationId APP > file}, in this JVM. */
  private static void writeLogs(ApplicationId appId, Configuration conf, Path file) throws Exception {
    PrintStream saved = System.out;
    try (OutputStream raw = Files.newOutputStream(file); PrintStream out = new PrintStream(raw, true, "UTF-8")) {
      System.setOut(out);
      LogsCLI cli = new LogsCLI();
      cli.setConf(new YarnConfiguration(conf));
      int rc = cli.run(new String[] {"-applicationId", appId.toString()});
      if (rc != 0) {
        throw new IOException("yarn logs -applicationId " + appId + " exited with " + rc);
      }
    } finally {
      System.setOut(saved);
    }
  }

  private static void writeXml(Configuration conf, Path file) throws IOException {
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    try (OutputStream out = Files.newOutputStream(tmp)) {
      conf.writeXml(out);
    }
    Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  /** The BindException in {@code e}'s causes (Hadoop's names the address: "Problem binding to [host:port]"). */
  private static java.net.BindException bindFailure(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof java.net.BindException) {
        return (java.net.BindException) t;
      }
    }
    return null;
  }

  private static String oneLine(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String msg = root.getClass().getSimpleName() + ": " + root.getMessage();
    if (root != e) {
      msg = e.getClass().getSimpleName() + ": " + e.getMessage() + " (cause: " + msg + ")";
    }
    return msg.replace('\n', ' ').replace('\r', ' ');
  }

  private static String stackTrace(Throwable t) {
    StringWriter sw = new StringWriter();
    t.printStackTrace(new PrintWriter(sw));
    return sw.toString();
  }
}
