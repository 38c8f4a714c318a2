/**
 * A JVM with one busy thread for the JFR and jstack tests: "busy worker", a daemon spinning on
 * arithmetic (always RUNNABLE), beside a main thread that sleeps (TIMED_WAITING).
 *
 * <p>Usage: BusyWorker [MS]. With MS, main sleeps that long and the JVM exits; without, main
 * sleeps in 50 ms steps until the JVM is killed.
 */
public class BusyWorker {
  public static void main(String[] a) throws Exception {
    Thread t = new Thread(() -> {
      double x = 0;
      while (true) {
        x += Math.sqrt(Math.random());
      }
    }, "busy worker");
    t.setDaemon(true);
    t.start();
    if (a.length > 0) {
      Thread.sleep(Long.parseLong(a[0]));
    } else {
      while (true) {
        Thread.sleep(50);
      }
    }
  }
}
