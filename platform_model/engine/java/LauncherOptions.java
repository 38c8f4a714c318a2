package phaseline.engine;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A launcher's command line ({@code EngineLauncher}, {@code YarnLauncher}): {@code --name value}
 * pairs among the names it knows, then, after {@code --}, the arguments it hands on.  An option
 * given several times keeps every value ({@link #all}); the single-valued getters take the last.
 */
public final class LauncherOptions {

  private final Map<String, List<String>> values = new HashMap<>();
  private final List<String> rest = new ArrayList<>();

  public LauncherOptions(String[] argv, Set<String> known) {
    for (int i = 0; i < argv.length; i++) {
      String a = argv[i];
      if (a.equals("--")) {
        rest.addAll(Arrays.asList(argv).subList(i + 1, argv.length));
        break;
      }
      if (i + 1 >= argv.length) {
        throw new IllegalArgumentException("missing value after " + a);
      }
      String v = argv[++i];
      if (!known.contains(a)) {
        throw new IllegalArgumentException("unknown option " + a);
      }
      values.computeIfAbsent(a, k -> new ArrayList<>()).add(v);
    }
  }

  /** The option's last value, or {@code null}. */
  public String get(String name) {
    List<String> all = values.get(name);
    return all == null ? null : all.get(all.size() - 1);
  }

  public long getLong(String name, long dflt) {
    String v = get(name);
    return v == null ? dflt : Long.parseLong(v);
  }

  public int getInt(String name, int dflt) {
    String v = get(name);
    return v == null ? dflt : Integer.parseInt(v);
  }

  /** Every value of a repeatable option, in order. */
  public List<String> all(String name) {
    return values.getOrDefault(name, Collections.emptyList());
  }

  /** The arguments after {@code --}. */
  public List<String> rest() {
    return rest;
  }
}
