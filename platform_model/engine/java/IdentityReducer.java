package phaseline.engine;

import java.io.IOException;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Reducer;

/** The microbenchmark's reduce function: the identity (Zhang et al. 2013, section 3). */
public final class IdentityReducer extends Reducer<Text, Text, Text, Text> {

  @Override
  protected void reduce(Text key, Iterable<Text> values, Context context)
      throws IOException, InterruptedException {
    for (Text value : values) {
      context.write(key, value);
    }
  }
}
