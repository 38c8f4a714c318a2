package phaseline.apps;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Mapper;

/**
 * A streaming job's shape (Hadoop Streaming's PipeMapper): each map starts an external process
 * ({@code tr a-z A-Z}) and pipes every input line through it, a thread reading the process's output
 * back; the map emits each line that comes back, keyed by its first ten bytes, and Hadoop's
 * identity reduce writes them in key order.  The process's CPU time is outside the task's JVM.
 * No combiner.
 *
 * <p>Usage: StreamPipe INPUT OUTPUT REDUCES
 */
public final class StreamPipe extends App {

  public StreamPipe() {
    super("streampipe", Pipe.class, null, null, Text.class, Text.class);
  }

  /** (line) -> the line upper-cased by the external process, as (key, rest of the line). */
  public static final class Pipe extends Mapper<Object, Text, Text, Text> {
    /** What the reader thread puts after the process's last line. */
    private static final String END = new String("end of output");

    private final Text line = new Text();
    private final Text k = new Text();
    private final Text v = new Text();
    // unbounded: a bounded queue could fill while the map blocks writing to the process, whose output
    // the reader could then not take: each deadlocked on the other
    private final BlockingQueue<String> back = new LinkedBlockingQueue<>();
    private Process child;
    private OutputStream toChild;
    private Thread reader;
    private volatile IOException failed;

    @Override
    protected void setup(Context ctx) throws IOException {
      String tr = new File("/usr/bin/tr").canExecute() ? "/usr/bin/tr" : "tr";
      child = new ProcessBuilder(tr, "a-z", "A-Z").redirectError(ProcessBuilder.Redirect.INHERIT).start();
      toChild = child.getOutputStream();
      reader = new Thread(() -> {
        try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(),
            StandardCharsets.UTF_8))) {
          for (String s = out.readLine(); s != null; s = out.readLine()) {
            back.put(s);
          }
        } catch (IOException e) {
          failed = e;
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        } finally {
          back.add(END);
        }
      }, "stream-pipe-reader");
      reader.setDaemon(true);
      reader.start();
    }

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      toChild.write(value.getBytes(), 0, value.getLength());
      toChild.write('\n');
      for (String s = back.poll(); s != null; s = back.poll()) {
        emit(s, ctx);
      }
    }

    @Override
    protected void cleanup(Context ctx) throws IOException, InterruptedException {
      toChild.close();
      for (String s = back.take(); s != END; s = back.take()) {
        emit(s, ctx);
      }
      reader.join();
      int status = child.waitFor();
      if (failed != null) {
        throw failed;
      }
      if (status != 0) {
        throw new IOException("the piped process exited with status " + status);
      }
    }

    private void emit(String s, Context ctx) throws IOException, InterruptedException {
      line.set(s);
      keyOf(line, k);
      valueOf(line, v);
      ctx.write(k, v);
    }
  }
}
