import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedMethod;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

/**
 * Streams the thread samples of a JDK Flight Recorder recording as compact TSV lines.
 *
 * <p>Read by phaseline's ingest/jfr.py; the line kinds are documented there. Each distinct
 * stack (method-level frames, top first) is written once as a {@code K} line before the first
 * sample that uses it; samples refer to it by number. Uses only the public
 * {@code jdk.jfr.consumer.RecordingFile} API, one event at a time, so memory stays flat.
 */
public final class JfrDump {
    private static final String SAMPLE_STATE = "state";

    private JfrDump() {}

    private static String clean(String s) {
        if (s == null) {
            return "";
        }
        StringBuilder b = null;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\t' || c == '\n' || c == '\r') {
                if (b == null) {
                    b = new StringBuilder(s.substring(0, i));
                }
                b.append(' ');
            } else if (b != null) {
                b.append(c);
            }
        }
        return b == null ? s : b.toString();
    }

    private static long epochMillis(Instant t) {
        return t.getEpochSecond() * 1000L + t.getNano() / 1_000_000;
    }

    /**
     * A park's time limit in nanoseconds, positive for a timed park. {@code LockSupport.parkUntil}
     * has no timeout ({@code Long.MIN_VALUE}, as an untimed park) but a deadline in {@code until}
     * (milliseconds since the epoch): its limit is the time from the park's start to the deadline,
     * at least 1 (a deadline already past still made a timed park).
     */
    private static long parkTimeout(RecordedEvent e, long startMillis) {
        long timeout = e.getLong("timeout");
        if (timeout != Long.MIN_VALUE || !e.hasField("until")) {
            return timeout;
        }
        long until = e.getLong("until");
        if (until == Long.MIN_VALUE) {
            return timeout;
        }
        long leftMillis = until > startMillis ? until - startMillis : 0;
        return Math.max(1L, Math.min(leftMillis, Long.MAX_VALUE / 1_000_000L) * 1_000_000L);
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: JfrDump RECORDING.jfr");
            System.exit(2);
        }
        Path path = Paths.get(args[0]);
        Map<String, Integer> stacks = new HashMap<>();
        BufferedWriter out = new BufferedWriter(
            new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16);
        out.write("#jfrdump\t1\n");
        StringBuilder key = new StringBuilder();
        try {
            dump(path, stacks, out, key);
        } catch (IOException | RuntimeException e) {
            // one line the reader can quote (file, what failed), after every event read so far
            out.write("#error\t" + clean(e.toString()) + "\n");
            out.flush();
            System.exit(1);
        }
        out.write("#end\n");
        out.flush();
    }

    private static void dump(Path path, Map<String, Integer> stacks, BufferedWriter out, StringBuilder key)
            throws IOException {
        try (RecordingFile file = new RecordingFile(path)) {
            while (file.hasMoreEvents()) {
                RecordedEvent e = file.readEvent();
                String type = e.getEventType().getName();
                long start = epochMillis(e.getStartTime());
                switch (type) {
                    case "jdk.CPULoad":
                        out.write("C\t" + start + "\t" + e.getFloat("jvmUser") + "\t"
                            + e.getFloat("jvmSystem") + "\t" + e.getFloat("machineTotal") + "\n");
                        continue;
                    case "jdk.Compilation": {
                        // the JIT's compile of one method: its start and length, and the tier it compiled
                        Object level = e.hasField("compileLevel") ? e.getValue("compileLevel") : null;
                        out.write("J\t" + start + "\t" + e.getDuration().toNanos() / 1000 + "\t"
                            + (level == null ? "" : clean(level.toString())) + "\n");
                        continue;
                    }
                    case "jdk.ThreadStart":
                    case "jdk.ThreadEnd": {
                        RecordedThread t = e.getThread("thread");
                        if (t != null) {
                            out.write("T\t" + type + "\t" + start + "\t" + t.getJavaThreadId() + "\t"
                                + clean(t.getJavaName()) + "\n");
                        }
                        continue;
                    }
                    case "jdk.ExecutionSample":
                    case "jdk.NativeMethodSample":
                    case "jdk.ThreadPark":
                    case "jdk.JavaMonitorWait":
                    case "jdk.JavaMonitorEnter":
                    case "jdk.ThreadSleep":
                    case "jdk.FileRead":
                    case "jdk.FileWrite":
                    case "jdk.SocketRead":
                    case "jdk.SocketWrite":
                        break;
                    default:
                        continue;
                }
                boolean sampled = type.equals("jdk.ExecutionSample") || type.equals("jdk.NativeMethodSample");
                RecordedThread thread = sampled ? e.getThread("sampledThread") : e.getThread();
                if (thread == null) {
                    continue;
                }
                Object rawState = sampled && e.hasField(SAMPLE_STATE) ? e.getValue(SAMPLE_STATE) : null;
                String state = rawState == null ? "" : clean(rawState.toString());
                long timeout = 0;
                if (type.equals("jdk.ThreadPark") && e.hasField("timeout")) {
                    timeout = parkTimeout(e, start);
                } else if (type.equals("jdk.JavaMonitorWait") && e.hasField("timeout")) {
                    timeout = e.getLong("timeout");
                }
                int stackId = -1;
                RecordedStackTrace st = e.getStackTrace();
                if (st != null) {
                    List<RecordedFrame> frames = st.getFrames();
                    key.setLength(0);
                    for (RecordedFrame f : frames) {
                        RecordedMethod m = f.getMethod();
                        if (key.length() > 0) {
                            key.append('\t');
                        }
                        key.append(clean(m.getType().getName())).append('.').append(clean(m.getName()));
                    }
                    if (st.isTruncated()) {
                        key.append("\t...");
                    }
                    String k = key.toString();
                    Integer id = stacks.get(k);
                    if (id == null) {
                        id = stacks.size();
                        stacks.put(k, id);
                        out.write("K\t" + id + "\t" + k + "\n");
                    }
                    stackId = id;
                }
                Duration d = e.getDuration();
                out.write("E\t" + type + "\t" + start + "\t" + d.toNanos() / 1000 + "\t"
                    + thread.getJavaThreadId() + "\t" + clean(thread.getJavaName()) + "\t" + state
                    + "\t" + timeout + "\t" + stackId + "\n");
            }
        }
    }
}
