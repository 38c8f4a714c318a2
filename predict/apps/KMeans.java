package phaseline.apps;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.util.SplittableRandom;

import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.io.Writable;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Reducer;

/**
 * One iteration of k-means (the shape of HiBench's kmeans): each record is a point of {@link #DIM}
 * coordinates (its key's characters in pairs, scaled to [0, 1)), assigned to the nearest of {@link #K}
 * centroids (a seeded draw, the same in every task).  The map emits (centroid, the point as a partial
 * sum), a combiner adds a map's partial sums up per centroid, so a map shuffles at most K records, and
 * the reduce writes each centroid's new position.  Floating-point work in the map, a tiny shuffle.
 *
 * <p>Usage: KMeans INPUT OUTPUT REDUCES
 */
public final class KMeans extends App {

  /** Centroids, and coordinates of a point. */
  static final int K = 32;
  static final int DIM = 5;
  /** The printable characters a key is drawn from: 95, so a pair of them is one of 95 * 95 values. */
  static final int CHARS = 95;

  public KMeans() {
    // the reduce writes text, the map partial sums
    super("kmeans", Assign.class, Add.class, Centre.class, IntWritable.class, Text.class, Partial.class);
  }

  /** The same centroids in every task: K points drawn from a fixed seed. */
  static double[][] centroids() {
    SplittableRandom rnd = new SplittableRandom(42);
    double[][] c = new double[K][DIM];
    for (double[] point : c) {
      for (int d = 0; d < DIM; d++) {
        point[d] = rnd.nextDouble();
      }
    }
    return c;
  }

  /** A sum of points and how many were added. */
  public static final class Partial implements Writable {
    final double[] sum = new double[DIM];
    long count;

    /** This partial set to the sum of {@code partials}. */
    Partial sumOf(Iterable<Partial> partials) {
      java.util.Arrays.fill(sum, 0.0);
      count = 0;
      for (Partial other : partials) {
        for (int d = 0; d < DIM; d++) {
          sum[d] += other.sum[d];
        }
        count += other.count;
      }
      return this;
    }

    @Override
    public void write(DataOutput out) throws IOException {
      for (double s : sum) {
        out.writeDouble(s);
      }
      out.writeLong(count);
    }

    @Override
    public void readFields(DataInput in) throws IOException {
      for (int d = 0; d < DIM; d++) {
        sum[d] = in.readDouble();
      }
      count = in.readLong();
    }
  }

  /** (line) -> (nearest centroid, the line's point). */
  public static final class Assign extends Mapper<Object, Text, IntWritable, Partial> {
    private final double[][] centroids = centroids();
    private final IntWritable nearest = new IntWritable();
    private final Partial point = new Partial();

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      byte[] b = value.getBytes();
      if (value.getLength() < 2 * DIM) {
        return;
      }
      for (int d = 0; d < DIM; d++) {
        int pair = ((b[2 * d] - ' ') % CHARS) * CHARS + (b[2 * d + 1] - ' ') % CHARS;
        point.sum[d] = (double) Math.floorMod(pair, CHARS * CHARS) / (CHARS * CHARS);
      }
      point.count = 1;
      int best = 0;
      double bestDistance = Double.MAX_VALUE;
      for (int c = 0; c < K; c++) {
        double distance = 0;
        for (int d = 0; d < DIM; d++) {
          double delta = point.sum[d] - centroids[c][d];
          distance += delta * delta;
        }
        if (distance < bestDistance) {
          bestDistance = distance;
          best = c;
        }
      }
      nearest.set(best);
      ctx.write(nearest, point);
    }
  }

  /** (centroid, partial sums) -> (centroid, their sum): the combiner. */
  public static final class Add extends Reducer<IntWritable, Partial, IntWritable, Partial> {
    private final Partial total = new Partial();

    @Override
    protected void reduce(IntWritable key, Iterable<Partial> values, Context ctx)
        throws IOException, InterruptedException {
      ctx.write(key, total.sumOf(values));
    }
  }

  /** (centroid, partial sums) -> (centroid, "count x1 ... x5"): its new position. */
  public static final class Centre extends Reducer<IntWritable, Partial, IntWritable, Text> {
    private final Partial total = new Partial();
    private final Text out = new Text();

    @Override
    protected void reduce(IntWritable key, Iterable<Partial> values, Context ctx)
        throws IOException, InterruptedException {
      total.sumOf(values);
      StringBuilder s = new StringBuilder().append(total.count);
      for (double sum : total.sum) {
        s.append(' ').append(sum / Math.max(1, total.count));
      }
      out.set(s.toString());
      ctx.write(key, out);
    }
  }
}
