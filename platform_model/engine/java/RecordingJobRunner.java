package phaseline.engine;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.LocalJobRunner;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.protocol.ClientProtocol;
import org.apache.hadoop.mapreduce.protocol.ClientProtocolProvider;
import org.apache.hadoop.security.Credentials;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hadoop's {@link LocalJobRunner}, unchanged, plus a record of every job it runs.
 *
 * <p>A job's own driver creates its {@code Job}; the engine never sees that object.
 * To report the job id, status, times and counters of any driver (ours or a
 * user's), the engine registers {@link Provider} as a
 * {@code ClientProtocolProvider} ahead of Hadoop's own (its service file comes
 * first on the classpath), so {@code Cluster} gets this runner for
 * {@code mapreduce.framework.name=local}.  On submission it copies the submitted
 * {@code job.xml} to {@code RUN_DIR/<job_id>_conf.xml}, notes the submit time (before
 * LocalJobRunner reads the job) and the launch time (once its job thread has been
 * started), and starts a watcher that
 * notes the time the job reaches a terminal state (LocalJobRunner does not set
 * finish times in its {@code JobStatus}).
 */
public class RecordingJobRunner extends LocalJobRunner {

  private static final Logger LOG = LoggerFactory.getLogger(RecordingJobRunner.class);
  /** System property naming the run directory. */
  public static final String RUN_DIR_PROPERTY = "phaseline.run.dir";
  private static final long WATCH_MS = 5;

  private static final List<Recorded> JOBS = new ArrayList<>();

  /** What the engine knows about one submitted job. */
  public static final class Recorded {
    public final RecordingJobRunner runner;
    public final JobID id;
    public final String name;
    public final String user;
    public final String confFile;
    public final long submitMs;
    /** When LocalJobRunner's job thread had been started (its constructor starts it). */
    public final long launchMs;
    volatile long finishMs = -1;

    Recorded(RecordingJobRunner runner, JobID id, String name, String user, String confFile, long submitMs,
        long launchMs) {
      this.runner = runner;
      this.id = id;
      this.name = name;
      this.user = user;
      this.confFile = confFile;
      this.submitMs = submitMs;
      this.launchMs = launchMs;
    }

    public long finishMs() {
      return finishMs;
    }
  }

  public RecordingJobRunner(Configuration conf) throws IOException {
    super(conf);
  }

  /** Every job submitted so far, in submission order. */
  public static List<Recorded> jobs() {
    synchronized (JOBS) {
      return new ArrayList<>(JOBS);
    }
  }

  /** Drop the jobs recorded so far (the warm-up job's): the report lists the jobs after this call. */
  public static void forgetJobs() {
    synchronized (JOBS) {
      JOBS.clear();
    }
  }

  @Override
  public JobStatus submitJob(JobID jobId, String jobSubmitDir, Credentials credentials)
      throws IOException {
    long submitMs = System.currentTimeMillis();
    JobConf submitted = new JobConf(new Path(jobSubmitDir, "job.xml"));
    if (submitted.get("mapreduce.job.id") == null) {
      submitted.set("mapreduce.job.id", jobId.toString());
    }
    String confName = jobId + "_conf.xml";
    String runDir = System.getProperty(RUN_DIR_PROPERTY);
    if (runDir != null) {
      try (OutputStream out = Files.newOutputStream(Paths.get(runDir, confName))) {
        submitted.writeXml(out);
      }
    }
    JobStatus status = super.submitJob(jobId, jobSubmitDir, credentials);
    long launchMs = System.currentTimeMillis();
    Recorded rec = new Recorded(this, jobId, submitted.getJobName(), submitted.getUser(), confName, submitMs,
        launchMs);
    synchronized (JOBS) {
      JOBS.add(rec);
    }
    Thread watcher = new Thread(() -> watch(rec), "phaseline-watch-" + jobId);
    watcher.setDaemon(true);
    watcher.start();
    LOG.info("Recording job " + jobId + " submitted at " + submitMs);
    return status;
  }

  private void watch(Recorded rec) {
    try {
      while (true) {
        JobStatus st = getJobStatus(rec.id);
        if (st != null && st.isJobComplete()) {
          rec.finishMs = System.currentTimeMillis();
          return;
        }
        Thread.sleep(WATCH_MS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Hands Hadoop's {@code Cluster} a {@link RecordingJobRunner} for the local framework. */
  public static final class Provider extends ClientProtocolProvider {
    @Override
    public ClientProtocol create(Configuration conf) throws IOException {
      if (!"local".equals(conf.get("mapreduce.framework.name", "local"))) {
        return null;
      }
      conf.setInt("mapreduce.job.maps", 1);  // as Hadoop's LocalClientProtocolProvider does
      return new RecordingJobRunner(conf);
    }

    @Override
    public ClientProtocol create(java.net.InetSocketAddress addr, Configuration conf) {
      return null;
    }

    @Override
    public void close(ClientProtocol protocol) {
    }
  }
}
