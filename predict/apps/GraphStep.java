package phaseline.apps;

import java.io.IOException;

import org.apache.hadoop.io.Text;

/**
 * One step of a PageRank-like iteration: each line is a node (its key) with {@link #DEGREE} links,
 * to the keys its own key's rotations name; the map sends each link a share of the node's rank and
 * the node its list of links, the reduce sums the shares a key receives and writes its new rank
 * (with its links where the key is a node).  The map output is {@link #DEGREE} + 1 records a line,
 * most of them small, to keys most of which no line has.
 *
 * <p>Usage: GraphStep INPUT OUTPUT REDUCES
 */
public final class GraphStep extends App {

  /** Links a node has. */
  static final int DEGREE = 4;

  public GraphStep() {
    super("graphstep", Links.class, null, Ranks.class, Text.class, Text.class);
  }

  /** (line) -> (link, "s share") for each link, and (node, "l links"). */
  public static final class Links extends Shapes.TextOut {
    @Override
    protected void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
      String node = keyOf(value.toString());
      double rank = 1.0 + (Math.floorMod(node.hashCode(), 1000) / 1000.0);
      String share = "s" + (rank / DEGREE);
      StringBuilder links = new StringBuilder("l");
      for (int i = 1; i <= DEGREE; i++) {
        int cut = i % node.length();
        String link = node.substring(cut) + node.substring(0, cut);
        links.append(' ').append(link);
        k.set(link);
        v.set(share);
        ctx.write(k, v);
      }
      k.set(node);
      v.set(links.toString());
      ctx.write(k, v);
    }
  }

  /** (key, shares and links) -> (key, "rank links"). */
  public static final class Ranks extends Shapes.Summary<Text> {
    @Override
    protected String summary(Iterable<Text> values) {
      double rank = 0.15;
      String links = "";
      for (Text v : values) {
        String s = v.toString();
        if (s.startsWith("s")) {
          rank += 0.85 * Double.parseDouble(s.substring(1));
        } else {
          links = s.substring(1);
        }
      }
      return rank + links;
    }
  }
}
