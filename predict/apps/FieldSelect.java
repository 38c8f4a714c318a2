package phaseline.apps;

import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.lib.fieldsel.FieldSelectionHelper;
import org.apache.hadoop.mapreduce.lib.fieldsel.FieldSelectionMapper;
import org.apache.hadoop.mapreduce.lib.fieldsel.FieldSelectionReducer;

/**
 * A projection, as {@code cut} in a pipeline: Hadoop's {@link FieldSelectionMapper} splits each line
 * at spaces and emits its third field as the key and its first as the value (the filler and the key
 * where the record's ten-character key holds no space, about nine in ten); {@link
 * FieldSelectionReducer} writes each group's values with the key before them.  No code of its own:
 * the library's string splitting and joining is the work.
 *
 * <p>Usage: FieldSelect INPUT OUTPUT REDUCES
 */
public final class FieldSelect extends App {

  /** Map: key = field 2 (0-based), value = field 0; reduce: key = field 0, value = fields 1 onwards. */
  static final String MAP_SPEC = "2:0";
  static final String REDUCE_SPEC = "0:1-";

  public FieldSelect() {
    super("fieldselect", FieldSelectionMapper.class, null, FieldSelectionReducer.class, Text.class, Text.class);
  }

  @Override
  protected void configure(Job job, String[] args) throws Exception {
    super.configure(job, args);
    job.getConfiguration().set(FieldSelectionHelper.DATA_FIELD_SEPARATOR, " ");
    job.getConfiguration().set(FieldSelectionHelper.MAP_OUTPUT_KEY_VALUE_SPEC, MAP_SPEC);
    job.getConfiguration().set(FieldSelectionHelper.REDUCE_OUTPUT_KEY_VALUE_SPEC, REDUCE_SPEC);
  }
}
