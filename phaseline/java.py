"""Java and Hadoop jars on this machine: find them, compile small Java sources against them.

phaseline carries a few Java programs (the microbenchmark job, Hadoop's own
``JobHistoryParser`` as an oracle, a JFR reader).  They are compiled with
``javac`` on first use into a cache keyed by the sources' content and the jars,
and run with ``java`` on the Hadoop 3.4 client jars that the ``pyspark`` wheel
ships (install ``phaseline[engine]``), or on the jars of a real Hadoop install
named by ``PHASELINE_HADOOP_JARS`` (a directory, searched recursively).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from phaseline.errors import EngineError

# Jars the Hadoop client needs at run time, by file-name prefix.  hadoop-client-runtime
# shades Hadoop's third-party dependencies; logging comes from slf4j + log4j2.
_JAR_PREFIXES = (
    "hadoop-client-api-",
    "hadoop-client-runtime-",
    "slf4j-api-",
    "log4j-api-",
    "log4j-core-",
    "log4j-slf4j2-impl-",
    "log4j-1.2-api-",
    "commons-logging-",
    "jcl-over-slf4j-",  # commons-logging API over slf4j (pyspark 4.x ships this instead)
    # Hadoop 3.3+'s Lz4Codec and SnappyCodec call these, which hadoop-client-runtime does not shade:
    # without them a job that compresses its map output with LZ4 or Snappy fails in its first spill
    "lz4-java-",
    "snappy-java-",
)

INSTALL_HINT = (
    "install the engine extra: pip install 'phaseline[engine]' (it brings the pyspark wheel, "
    "which ships Hadoop 3.4's client jars), or point PHASELINE_HADOOP_JARS at a directory "
    "of Hadoop jars; Java 17 (java, javac) must be on PATH"
)


def cache_dir() -> Path:
    """Where compiled classes and jars go (``PHASELINE_CACHE`` or ``~/.cache/phaseline``)."""
    root = os.environ.get("PHASELINE_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "phaseline"
    )
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def java_tool(name: str) -> str:
    """Full path of ``java``/``javac``/``jar``/``jfr``, or an :class:`EngineError` saying what to install."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / name).exists():
        return str(Path(home) / "bin" / name)
    found = shutil.which(name)
    if found is None:
        raise EngineError(f"`{name}` not found on PATH; install a JDK 17 (e.g. apt-get install openjdk-17-jdk-headless)")
    return found


def jars_dir() -> Path:
    """The directory holding Hadoop's client jars."""
    override = os.environ.get("PHASELINE_HADOOP_JARS")
    if override:
        path = Path(override)
        if not path.is_dir():
            raise EngineError(f"PHASELINE_HADOOP_JARS={override} is not a directory")
        return path
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise EngineError(f"Hadoop jars not found: {INSTALL_HINT}")
    path = Path(spec.origin).parent / "jars"
    if not path.is_dir():
        raise EngineError(f"pyspark is installed but has no jars/ directory at {path}: {INSTALL_HINT}")
    return path


def hadoop_classpath() -> list[Path]:
    """The jars to run Hadoop's MapReduce client code (LocalJobRunner, JobHistoryParser)."""
    root = jars_dir()
    jars = sorted(p for p in root.rglob("*.jar") if p.name.startswith(_JAR_PREFIXES))
    if not any(p.name.startswith("hadoop-client-api-") for p in jars):
        # A real Hadoop install has the unshaded jars instead: use them all.
        jars = sorted(root.rglob("*.jar"))
        if not any(p.name.startswith("hadoop-mapreduce-client-core") for p in jars):
            raise EngineError(f"no Hadoop MapReduce client jars under {root}: {INSTALL_HINT}")
    return jars


def classpath_string(extra: Sequence[Path] = ()) -> str:
    return os.pathsep.join(str(p) for p in [*extra, *hadoop_classpath()])


def compile_java(
    name: str, sources: Sequence[Path], *, make_jar: bool = False, classpath: Sequence[Path] | None = None
) -> Path:
    """Compile Java sources against the Hadoop jars, once; return the classes directory.

    The cache key is the sources' content and the jar file names, so an edit to
    a source or a different Hadoop recompiles.  With ``make_jar`` a jar is built
    beside the classes (``<classes>.jar``), for ``hadoop jar`` on a cluster.
    ``classpath`` compiles against those jars and directories instead of the client jars
    (the YARN engine's launcher, against the cluster's own jars).
    """
    cp = hadoop_classpath() if classpath is None else list(classpath)
    digest = hashlib.sha256()
    for src in sorted(sources):
        digest.update(src.name.encode())
        digest.update(src.read_bytes())
    for jar in cp:  # an explicit classpath by full path: its directories' names say nothing
        digest.update((jar.name if classpath is None else str(jar)).encode())
    target = cache_dir() / "java" / f"{name}-{digest.hexdigest()[:16]}"
    classes = target / "classes"
    if not (target / "OK").exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=target.parent))
        out = tmp / "classes"
        out.mkdir()
        cmd = [
            java_tool("javac"),
            "-nowarn",
            "-encoding",
            "UTF-8",
            "--release",
            "11",
            "-cp",
            os.pathsep.join(str(p) for p in cp),
            "-d",
            str(out),
            *[str(s) for s in sources],
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise EngineError(f"javac failed for {name}:\n{proc.stderr.strip()}")
        (tmp / "OK").write_text("ok\n")
        try:
            os.replace(tmp, target)  # atomic: concurrent compilers race harmlessly
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
            if not (target / "OK").exists():
                raise
    if make_jar:
        jar = target / f"{name}.jar"
        if not jar.exists():
            tmp_jar = target / f".{name}.jar.tmp"
            proc = subprocess.run(
                [java_tool("jar"), "cf", str(tmp_jar), "-C", str(classes), "."],
                capture_output=True,
                text=True,
            )
            if proc.returncode != 0:
                raise EngineError(f"jar failed for {name}: {proc.stderr.strip()}")
            os.replace(tmp_jar, jar)
    return classes


def java_command(main_class: str, classes: Sequence[Path], *, jvm_args: Sequence[str] = ()) -> list[str]:
    """``java [jvm_args] -cp classes:hadoop-jars main_class``, ready for extra arguments."""
    return [
        java_tool("java"),
        *jvm_args,
        "-cp",
        classpath_string(list(classes)),
        main_class,
    ]
