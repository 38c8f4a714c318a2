package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.io.NullWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.Reducer;
import org.apache.hadoop.mapreduce.lib.partition.KeyFieldBasedComparator;
import org.apache.hadoop.mapreduce.lib.partition.KeyFieldBasedPartitioner;

/**
 * A sort by fields, as Hadoop Streaming users write {@code sort -k}: every record is shuffled whole
 * as its key, compared by {@link KeyFieldBasedComparator} on its third space-separated field
 * (descending) then its first (ascending), and partitioned by {@link KeyFieldBasedPartitioner} on the
 * third.  The third field is the record's filler where its ten-character key holds no space (about
 * nine keys in ten), else a field further left.  Each comparison finds the fields in the key's bytes,
 * where sort compares raw bytes.  The reduce is Hadoop's identity {@link Reducer}: the keys back.
 *
 * <p>Usage: FieldSort INPUT OUTPUT REDUCES
 */
public final class FieldSort extends App {

  /** The comparator's and the partitioner's options (Unix sort's -k; fields split at spaces). */
  static final String SORT_KEYS = "-k3,3r -k1,1";
  static final String PARTITION_KEYS = "-k3,3";

  public FieldSort() {
    super("fieldsort", Line.class, null, Reducer.class, Text.class, NullWritable.class);
  }

  @Override
  protected void configure(Job job, String[] args) throws Exception {
    super.configure(job, args);
    job.getConfiguration().set(MRJobConfig.MAP_OUTPUT_KEY_FIELD_SEPARATOR, " ");
    job.setSortComparatorClass(KeyFieldBasedComparator.class);
    KeyFieldBasedComparator.setKeyFieldComparatorOptions(job, SORT_KEYS);
    job.setPartitionerClass(KeyFieldBasedPartitioner.class);
    job.getConfiguration().set(KeyFieldBasedPartitioner.PARTITIONER_OPTIONS, PARTITION_KEYS);
  }

  /** (line) -> (line, nothing). */
  public static final class Line extends Mapper<Object, Text, Text, NullWritable> {
    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      ctx.write(value, NullWritable.get());
    }
  }
}
