import java.util.concurrent.locks.LockSupport;

/**
 * Three threads parked three ways, for the JFR test of park states: "park until" (parkUntil a
 * deadline), "park nanos" (parkNanos) and "park" (park with no limit, unparked by main now and
 * then). The JVM exits after about 0.8 s.
 */
public class Parks {
  public static void main(String[] a) throws Exception {
    Thread until = new Thread(() -> {
      while (true) {
        LockSupport.parkUntil(System.currentTimeMillis() + 100);
      }
    }, "park until");
    Thread nanos = new Thread(() -> {
      while (true) {
        LockSupport.parkNanos(100_000_000L);
      }
    }, "park nanos");
    Thread forever = new Thread(() -> {
      while (true) {
        LockSupport.park();
      }
    }, "park");
    for (Thread t : new Thread[] {until, nanos, forever}) {
      t.setDaemon(true);
      t.start();
    }
    for (int i = 0; i < 8; i++) {
      Thread.sleep(100);
      LockSupport.unpark(forever);
    }
  }
}
