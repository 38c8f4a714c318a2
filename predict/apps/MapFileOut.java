package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Reducer;
import org.apache.hadoop.mapreduce.lib.output.MapFileOutputFormat;

/**
 * A sort into an indexed output: every record is shuffled under its key, and each reduce writes its
 * sorted partition through {@link MapFileOutputFormat}, a MapFile (a data SequenceFile and an index of
 * every 128th key, for lookups by key later).  The reduce is Hadoop's identity {@link Reducer}.
 *
 * <p>Usage: MapFileOut INPUT OUTPUT REDUCES
 */
public final class MapFileOut extends App {

  public MapFileOut() {
    super("mapfileout", KeyRest.class, null, Reducer.class, Text.class, Text.class);
  }

  @Override
  protected void configure(Job job, String[] args) throws Exception {
    super.configure(job, args);
    job.setOutputFormatClass(MapFileOutputFormat.class);
  }

  /** (line) -> (key, rest of the line). */
  public static final class KeyRest extends Mapper<Object, Text, Text, Text> {
    private final Text k = new Text();
    private final Text v = new Text();

    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      keyOf(value, k);
      valueOf(value, v);
      ctx.write(k, v);
    }
  }
}
