import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.Counter;
import org.apache.hadoop.mapreduce.CounterGroup;
import org.apache.hadoop.mapreduce.Counters;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskID;
import org.apache.hadoop.mapreduce.jobhistory.JobHistoryParser;
import org.apache.hadoop.mapreduce.jobhistory.JobHistoryParser.JobInfo;
import org.apache.hadoop.mapreduce.jobhistory.JobHistoryParser.TaskAttemptInfo;
import org.apache.hadoop.mapreduce.jobhistory.JobHistoryParser.TaskInfo;

/**
 * Oracle for phaseline's .jhist reader: runs Hadoop's own JobHistoryParser on
 * each file named on the command line and prints one JSON object per file
 * (one line each) with the job, its tasks, attempts and every counter exactly
 * as Hadoop reports them (raw values: -1 for unset times, "" for unset
 * strings, null for absent objects).
 *
 * Usage: JhistDump [--summary] FILE...
 *   --summary  print only counts and timing (for the throughput benchmark)
 *
 * Every object carries "parse_ns": the time JobHistoryParser.parse() took,
 * so a caller can separate parsing from JVM start-up.  A file Hadoop cannot
 * open at all yields {"path":..., "fatal": "..."}; a parse stopped part way
 * (Hadoop keeps what it read) carries the message in "parse_exception".
 */
public final class JhistDump {

  private JhistDump() {
  }

  public static void main(String[] args) throws IOException {
    boolean summary = false;
    FileSystem fs = FileSystem.getLocal(new Configuration()).getRawFileSystem();
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    for (String arg : args) {
      if (arg.equals("--summary")) {
        summary = true;
        continue;
      }
      StringBuilder sb = new StringBuilder(1 << 16);
      File file = new File(arg);
      sb.append("{\"path\":").append(str(arg)).append(",\"bytes\":").append(file.length());
      JobHistoryParser parser;
      JobInfo info;
      long t0 = System.nanoTime();
      try {
        parser = new JobHistoryParser(fs, new Path(file.getAbsolutePath()));
        info = parser.parse();
      } catch (Exception | Error e) {
        sb.append(",\"fatal\":").append(str(e.toString())).append('}');
        out.println(sb);
        continue;
      }
      long parseNs = System.nanoTime() - t0;
      sb.append(",\"parse_ns\":").append(parseNs);
      IOException pe = parser.getParseException();
      sb.append(",\"parse_exception\":").append(pe == null ? "null" : str(pe.toString()));
      if (summary) {
        summarize(sb, info);
      } else {
        dumpJob(sb, info);
      }
      sb.append('}');
      out.println(sb);
    }
    out.flush();
  }

  private static void summarize(StringBuilder sb, JobInfo info) {
    int tasks = 0;
    int attempts = 0;
    long counters = countCounters(info.getTotalCounters())
        + countCounters(info.getMapCounters()) + countCounters(info.getReduceCounters());
    for (TaskInfo t : info.getAllTasks().values()) {
      tasks++;
      counters += countCounters(t.getCounters());
      for (TaskAttemptInfo a : t.getAllTaskAttempts().values()) {
        attempts++;
        counters += countCounters(a.getCounters());
      }
    }
    sb.append(",\"job_id\":").append(str(info.getJobId() == null ? null : info.getJobId().toString()));
    sb.append(",\"tasks\":").append(tasks).append(",\"attempts\":").append(attempts);
    sb.append(",\"counters\":").append(counters);
  }

  private static long countCounters(Counters c) {
    long n = 0;
    if (c != null) {
      for (CounterGroup g : c) {
        for (Counter ignored : g) {
          n++;
        }
      }
    }
    return n;
  }

  private static void dumpJob(StringBuilder sb, JobInfo info) {
    sb.append(",\"job\":{");
    sb.append("\"job_id\":").append(str(info.getJobId() == null ? null : info.getJobId().toString()));
    sb.append(",\"name\":").append(str(info.getJobname()));
    sb.append(",\"user\":").append(str(info.getUsername()));
    sb.append(",\"queue\":").append(str(info.getJobQueueName()));
    sb.append(",\"status\":").append(str(info.getJobStatus()));
    sb.append(",\"submit_ms\":").append(info.getSubmitTime());
    sb.append(",\"launch_ms\":").append(info.getLaunchTime());
    sb.append(",\"finish_ms\":").append(info.getFinishTime());
    sb.append(",\"total_maps\":").append(info.getTotalMaps());
    sb.append(",\"total_reduces\":").append(info.getTotalReduces());
    sb.append(",\"finished_maps\":").append(info.getSucceededMaps());
    sb.append(",\"finished_reduces\":").append(info.getSucceededReduces());
    sb.append(",\"failed_maps\":").append(info.getFailedMaps());
    sb.append(",\"failed_reduces\":").append(info.getFailedReduces());
    sb.append(",\"killed_maps\":").append(info.getKilledMaps());
    sb.append(",\"killed_reduces\":").append(info.getKilledReduces());
    sb.append(",\"uberized\":").append(info.getUberized());
    sb.append(",\"error_info\":").append(str(info.getErrorInfo()));
    sb.append(",\"total_counters\":");
    counters(sb, info.getTotalCounters());
    sb.append(",\"map_counters\":");
    counters(sb, info.getMapCounters());
    sb.append(",\"reduce_counters\":");
    counters(sb, info.getReduceCounters());
    sb.append("},\"tasks\":[");
    boolean firstTask = true;
    for (Map.Entry<TaskID, TaskInfo> te : info.getAllTasks().entrySet()) {
      TaskInfo t = te.getValue();
      if (!firstTask) {
        sb.append(',');
      }
      firstTask = false;
      sb.append("{\"task_id\":").append(str(String.valueOf(t.getTaskId())));
      sb.append(",\"task_type\":").append(str(t.getTaskType() == null ? null : t.getTaskType().name()));
      sb.append(",\"status\":").append(str(t.getTaskStatus()));
      sb.append(",\"start_ms\":").append(t.getStartTime());
      sb.append(",\"finish_ms\":").append(t.getFinishTime());
      sb.append(",\"successful_attempt_id\":").append(id(t.getSuccessfulAttemptId()));
      sb.append(",\"failed_due_to_attempt_id\":").append(id(t.getFailedDueToAttemptId()));
      sb.append(",\"splits\":").append(str(t.getSplitLocations()));
      sb.append(",\"error\":").append(str(t.getError()));
      sb.append(",\"counters\":");
      counters(sb, t.getCounters());
      sb.append(",\"attempts\":[");
      boolean firstAttempt = true;
      for (Map.Entry<TaskAttemptID, TaskAttemptInfo> ae : t.getAllTaskAttempts().entrySet()) {
        TaskAttemptInfo a = ae.getValue();
        if (!firstAttempt) {
          sb.append(',');
        }
        firstAttempt = false;
        sb.append("{\"attempt_id\":").append(id(a.getAttemptId()));
        sb.append(",\"task_type\":").append(str(a.getTaskType() == null ? null : a.getTaskType().name()));
        sb.append(",\"status\":").append(str(a.getTaskStatus()));
        sb.append(",\"start_ms\":").append(a.getStartTime());
        sb.append(",\"finish_ms\":").append(a.getFinishTime());
        sb.append(",\"map_finish_ms\":").append(a.getMapFinishTime());
        sb.append(",\"shuffle_finish_ms\":").append(a.getShuffleFinishTime());
        sb.append(",\"sort_finish_ms\":").append(a.getSortFinishTime());
        sb.append(",\"hostname\":").append(str(a.getHostname()));
        sb.append(",\"port\":").append(a.getPort());
        sb.append(",\"rackname\":").append(str(a.getRackname()));
        sb.append(",\"tracker_name\":").append(str(a.getTrackerName()));
        sb.append(",\"http_port\":").append(a.getHttpPort());
        sb.append(",\"shuffle_port\":").append(a.getShufflePort());
        sb.append(",\"container_id\":").append(
            str(a.getContainerId() == null ? null : a.getContainerId().toString()));
        sb.append(",\"error\":").append(str(a.getError()));
        sb.append(",\"state\":").append(str(a.getState()));
        sb.append(",\"counters\":");
        counters(sb, a.getCounters());
        sb.append('}');
      }
      sb.append("]}");
    }
    sb.append(']');
  }

  private static String id(Object attemptId) {
    return attemptId == null ? "null" : str(attemptId.toString());
  }

  /** Counters as [[group name, counter name, value], ...] or null. */
  private static void counters(StringBuilder sb, Counters c) {
    if (c == null) {
      sb.append("null");
      return;
    }
    sb.append('[');
    boolean first = true;
    for (CounterGroup g : c) {
      for (Counter k : g) {
        if (!first) {
          sb.append(',');
        }
        first = false;
        sb.append('[').append(str(g.getName())).append(',').append(str(k.getName()))
            .append(',').append(k.getValue()).append(']');
      }
    }
    sb.append(']');
  }

  private static String str(String s) {
    if (s == null) {
      return "null";
    }
    StringBuilder b = new StringBuilder(s.length() + 2);
    b.append('"');
    for (int i = 0; i < s.length(); i++) {
      char ch = s.charAt(i);
      switch (ch) {
        case '"':
          b.append("\\\"");
          break;
        case '\\':
          b.append("\\\\");
          break;
        case '\n':
          b.append("\\n");
          break;
        case '\r':
          b.append("\\r");
          break;
        case '\t':
          b.append("\\t");
          break;
        default:
          if (ch < 0x20) {
            b.append(String.format("\\u%04x", (int) ch));
          } else {
            b.append(ch);
          }
      }
    }
    return b.append('"').toString();
  }
}
