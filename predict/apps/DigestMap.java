package phaseline.apps;

import java.io.IOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

import org.apache.hadoop.io.Text;

/**
 * A map-only fingerprint pass (the shape of a change-detection or content-addressing job): every
 * record's SHA-256 digest ({@link MessageDigest}) written as 64 hex characters beside the record's
 * key.  No reduce: the cost is the digest's, per byte of input, and the output is about three
 * quarters of the input.  Run with REDUCES 0.
 *
 * <p>Usage: DigestMap INPUT OUTPUT REDUCES
 */
public final class DigestMap extends App {

  public DigestMap() {
    super("digestmap", Digest.class, null, null, Text.class, Text.class);
  }

  /** (line) -> (key, hex SHA-256 of the line). */
  public static final class Digest extends Shapes.TextPair {
    private static final char[] HEX = "0123456789abcdef".toCharArray();
    private final char[] hex = new char[64];
    private MessageDigest sha;

    @Override
    protected void setup(Context ctx) throws IOException {
      try {
        sha = MessageDigest.getInstance("SHA-256");
      } catch (NoSuchAlgorithmException e) {
        throw new IOException(e);
      }
    }

    @Override
    protected boolean read(Text line, Context ctx) {
      sha.update(line.getBytes(), 0, line.getLength());
      byte[] d = sha.digest();
      for (int i = 0; i < d.length; i++) {
        hex[2 * i] = HEX[(d[i] >> 4) & 15];
        hex[2 * i + 1] = HEX[d[i] & 15];
      }
      keyOf(line, k);
      v.set(new String(hex));
      return true;
    }
  }
}
