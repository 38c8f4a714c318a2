"""The jars of a mini YARN cluster: fetch them once with Maven, pinned to the wheel's Hadoop.

The ``pyspark`` wheel ships Hadoop's shaded client jars (``hadoop-client-api-<ver>.jar``),
enough for LocalJobRunner but not for a cluster.  A YARN cluster on this machine is
Hadoop's ``MiniMRYarnCluster``: a ResourceManager, NodeManagers (with the
ShuffleHandler), a JobHistoryServer, and MapReduce's ApplicationMaster and ``YarnChild``
in the containers they start.

Measured (Hadoop 3.5.0, 2026-11-28): the shaded ``hadoop-client-minicluster`` jar holds
``MiniMRYarnCluster``, the ResourceManager, NodeManager and JobHistoryServer, but not
``MRAppMaster`` and ``YarnChild`` (``hadoop-mapreduce-client-app``) nor the
``ShuffleHandler`` (``hadoop-mapreduce-client-shuffle``); those unshaded jars need the
unshaded Guice, Jersey and Netty that the shaded client relocated.  The unshaded
``org.apache.hadoop:hadoop-minicluster`` artifact of the same version, with its runtime
dependencies (~195 jars, ~115 MB), is one consistent Hadoop: the cluster's JVM runs on
it alone, not on the wheel's jars.  Its test jars (``MiniYARNCluster``'s work directory
helpers) also call JUnit 5's ``Assertions``: ``junit-jupiter-api`` at the version Hadoop's
own ``hadoop-project`` pom manages comes too.  :func:`install_yarn` fetches it with
``mvn dependency:copy-dependencies`` on a generated pom into
``<cache>/yarn-<version>/jars`` (``OK`` written last).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from phaseline.errors import EngineError
from phaseline.java import cache_dir, jars_dir

#: The Maven artifact fetched (with its runtime dependencies).
YARN_ARTIFACT = "org.apache.hadoop:hadoop-minicluster"
_CLIENT_JAR = re.compile(r"^hadoop-client-api-(?P<version>\d+\.\d+\.\d+)\.jar$")
_MAVEN_TIMEOUT_S = 1200.0
INSTALL_COMMAND = "phaseline engine install-yarn"

_POM = """<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>phaseline</groupId>
  <artifactId>phaseline-yarn-jars</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencyManagement>
    <dependencies>
      <dependency>
        <groupId>org.apache.hadoop</groupId>
        <artifactId>hadoop-project</artifactId>
        <version>{version}</version>
        <type>pom</type>
        <scope>import</scope>
      </dependency>
    </dependencies>
  </dependencyManagement>
  <dependencies>
    <dependency>
      <groupId>org.apache.hadoop</groupId>
      <artifactId>hadoop-minicluster</artifactId>
      <version>{version}</version>
    </dependency>
    <dependency>
      <groupId>org.junit.jupiter</groupId>
      <artifactId>junit-jupiter-api</artifactId>
      <scope>compile</scope>
    </dependency>
  </dependencies>
</project>
"""


def client_hadoop_version() -> str:
    """The Hadoop version of the client jars phaseline runs on (from ``hadoop-client-api-<ver>.jar``)."""
    override = os.environ.get("PHASELINE_YARN_HADOOP_VERSION")
    if override:
        return override
    root = jars_dir()
    for jar in sorted(root.rglob("hadoop-client-api-*.jar")):
        match = _CLIENT_JAR.match(jar.name)
        if match:
            return match["version"]
    raise EngineError(
        f"no hadoop-client-api-<version>.jar under {root}: cannot tell which Hadoop to fetch for YARN; "
        "set PHASELINE_YARN_HADOOP_VERSION"
    )


def yarn_dir(version: str | None = None) -> Path:
    """``<cache>/yarn-<version>``: the cluster's jars (``jars/``) once installed."""
    return cache_dir() / f"yarn-{version or client_hadoop_version()}"


def yarn_classpath(version: str | None = None) -> list[Path]:
    """The installed cluster jars, or an :class:`EngineError` saying how to install them."""
    root = yarn_dir(version)
    if not (root / "OK").exists():
        raise EngineError(f"the YARN engine's jars are not installed (looked in {root}); run `{INSTALL_COMMAND}`")
    return sorted((root / "jars").glob("*.jar"))


def install_yarn(version: str | None = None, *, force: bool = False) -> Path:
    """Fetch ``hadoop-minicluster`` at the client jars' version and its runtime jars; return the jars dir.

    Idempotent: an installed version is left alone unless ``force``.  Needs ``mvn`` (Maven)
    and a JDK; the download is ~115 MB on the first install (Maven's own repository caches it).
    """
    version = version or client_hadoop_version()
    root = yarn_dir(version)
    if (root / "OK").exists() and not force:
        return root / "jars"
    mvn = shutil.which("mvn")
    if mvn is None:
        raise EngineError("`mvn` not found on PATH; install Maven (e.g. apt-get install maven) to fetch the YARN jars")
    root.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f"yarn-{version}-", dir=root.parent))
    try:
        (tmp / "pom.xml").write_text(_POM.format(version=version))
        cmd = [
            mvn, "-q", "-B", "-f", str(tmp / "pom.xml"), "dependency:copy-dependencies",
            "-DincludeScope=runtime", f"-DoutputDirectory={tmp / 'jars'}",
        ]  # fmt: skip
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=_MAVEN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise EngineError(f"mvn did not fetch {YARN_ARTIFACT}:{version} in {_MAVEN_TIMEOUT_S:.0f} s") from None
        if proc.returncode != 0:
            last = [line for line in (proc.stdout + proc.stderr).splitlines() if "ERROR" in line][:3]
            raise EngineError(f"mvn could not fetch {YARN_ARTIFACT}:{version}: {' | '.join(last) or proc.returncode}")
        if not any(p.name.startswith("hadoop-mapreduce-client-app-") for p in (tmp / "jars").glob("*.jar")):
            raise EngineError(f"mvn fetched {YARN_ARTIFACT}:{version} without hadoop-mapreduce-client-app")
        (tmp / "OK").write_text(f"{YARN_ARTIFACT}:{version}\n")
        if root.exists():
            shutil.rmtree(root)
        os.replace(tmp, root)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return root / "jars"


__all__ = ["INSTALL_COMMAND", "client_hadoop_version", "install_yarn", "yarn_classpath", "yarn_dir"]
