package phaseline.apps;

import java.io.IOException;
import java.util.Arrays;
import java.util.PriorityQueue;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Reducer;

/**
 * The top K of every group, kept in the reduce (the shape of {@code ROW_NUMBER() OVER (PARTITION BY
 * g ORDER BY score) <= K}): every record is shuffled whole under its group (the group-by
 * application's map, {@link GroupBy.ByGroup}), and the reduce keeps, in a bounded heap, the
 * {@value #K} records of the group with the largest score (the hash of the record's bytes).  The
 * shuffle carries all the input; the output is {@value #K} records a group, whatever the group's size.
 *
 * <p>Usage: GroupTopK INPUT OUTPUT REDUCES
 */
public final class GroupTopK extends App {

  /** Records kept a group. */
  static final int K = 3;

  public GroupTopK() {
    super("grouptopk", GroupBy.ByGroup.class, null, TopK.class, Text.class, Text.class);
  }

  /** A kept record and its score. */
  private static final class Scored {
    final long score;
    final String line;

    Scored(long score, String line) {
      this.score = score;
      this.line = line;
    }
  }

  /** (group, lines) -> (group, line) for the group's {@value #K} best-scored lines, best first. */
  public static final class TopK extends Reducer<Text, Text, Text, Text> {
    private final Text out = new Text();

    @Override
    protected void reduce(Text key, Iterable<Text> values, Context ctx) throws IOException, InterruptedException {
      PriorityQueue<Scored> heap = new PriorityQueue<>((a, b) -> Long.compare(a.score, b.score));
      for (Text v : values) {
        long score = mix(0, v.getBytes(), v.getLength(), 1);
        if (heap.size() < K) {
          heap.add(new Scored(score, v.toString()));
        } else if (score > heap.peek().score) {
          heap.poll();
          heap.add(new Scored(score, v.toString()));
        }
      }
      Scored[] best = heap.toArray(new Scored[0]);
      Arrays.sort(best, (a, b) -> Long.compare(b.score, a.score));
      for (Scored s : best) {
        out.set(s.line);
        ctx.write(key, out);
      }
    }
  }
}
