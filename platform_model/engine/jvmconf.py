"""Files the engine's JVM reads: Hadoop site XML, log4j2 configuration, JFR settings.

They are written into the run's temporary directory (``RUN_DIR/tmp/etc``), which
goes first on the JVM's classpath, the way ``hadoop jar`` puts
``HADOOP_CONF_DIR`` first: a driver's ``new Configuration()`` then sees the
engine's settings without being told.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path

#: log4j2 pattern of ``logs/job.log``: millisecond timestamps (UTC, the JVM runs with
#: ``-Duser.timezone=UTC``), level, thread name, thread id, logger, message.
LOG_PATTERN = "%d{yyyy-MM-dd HH:mm:ss,SSS} %-5p [%t] [tid:%tid] %c: %m%n"

#: Loggers at INFO: the MapReduce task code (MapTask, ReduceTask, MergeManagerImpl,
#: Fetcher/LocalFetcher, Merger, Task's "Final Counters for attempt_..."), the job
#: client, and the engine's own launcher.  Everything else logs at WARN.
INFO_LOGGERS = ("org.apache.hadoop.mapred", "org.apache.hadoop.mapreduce", "phaseline.engine")

#: JFR events recorded with ``--jfr`` and their settings.  Java execution is sampled
#: every 2 ms (``jdk.ExecutionSample``: warm microbenchmark tasks last 50-300 ms, and
#: at 10 ms too few of them carried enough samples to split their combined log spans),
#: native frames every 20 ms; waits longer than 1 ms are recorded with their stacks
#: (a spill thread parked on the sort buffer, a reducer waiting for fetches); and every JIT compile,
#: which a run without ``--jfr`` records alone (``jit.jfr``: recordings that run at once share their
#: events, so a run has one recording or the other, and its compiles are counted once).
JFR_EVENTS: Mapping[str, Mapping[str, str]] = {
    "jdk.Compilation": {"enabled": "true", "threshold": "0 ms"},
    "jdk.ExecutionSample": {"enabled": "true", "period": "2 ms"},
    "jdk.NativeMethodSample": {"enabled": "true", "period": "20 ms"},
    "jdk.ThreadPark": {"enabled": "true", "stackTrace": "true", "threshold": "1 ms"},
    "jdk.JavaMonitorWait": {"enabled": "true", "stackTrace": "true", "threshold": "1 ms"},
    "jdk.JavaMonitorEnter": {"enabled": "true", "stackTrace": "true", "threshold": "1 ms"},
    "jdk.FileRead": {"enabled": "true", "stackTrace": "true", "threshold": "1 ms"},
    "jdk.FileWrite": {"enabled": "true", "stackTrace": "true", "threshold": "1 ms"},
    "jdk.ThreadStart": {"enabled": "true"},
    "jdk.ThreadEnd": {"enabled": "true"},
    "jdk.GarbageCollection": {"enabled": "true", "threshold": "0 ms"},
    "jdk.CPULoad": {"enabled": "true", "period": "100 ms"},
}

#: Service file that puts the engine's recording LocalJobRunner ahead of Hadoop's.
PROVIDER_SERVICE = "META-INF/services/org.apache.hadoop.mapreduce.protocol.ClientProtocolProvider"
PROVIDER_CLASS = "phaseline.engine.RecordingJobRunner$Provider"


def write_site_xml(path: Path, settings: Mapping[str, str]) -> None:
    """Write ``settings`` as a Hadoop ``<configuration>`` file."""
    root = ET.Element("configuration")
    for name, value in settings.items():
        prop = ET.SubElement(root, "property")
        ET.SubElement(prop, "name").text = name
        ET.SubElement(prop, "value").text = value
    ET.indent(root)
    path.write_bytes(ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n")


def log4j2_properties() -> str:
    """The log4j2 configuration; the log file comes from ``-Dphaseline.log.file``."""
    lines = [
        "status = warn",
        "name = phaseline-engine",
        "appender.job.type = File",
        "appender.job.name = JOBLOG",
        "appender.job.fileName = ${sys:phaseline.log.file}",
        "appender.job.append = false",
        "appender.job.layout.type = PatternLayout",
        f"appender.job.layout.pattern = {LOG_PATTERN}",
        "rootLogger.level = warn",
        "rootLogger.appenderRef.job.ref = JOBLOG",
    ]
    for i, name in enumerate(INFO_LOGGERS):
        lines += [f"logger.l{i}.name = {name}", f"logger.l{i}.level = info"]
    return "\n".join(lines) + "\n"


def jfr_settings() -> str:
    """A JFR ``.jfc`` settings file with :data:`JFR_EVENTS`."""
    root = ET.Element(
        "configuration",
        version="2.0",
        label="phaseline",
        description="phaseline engine: Java execution samples and waits of MapReduce threads",
        provider="phaseline",
    )
    for event, settings in JFR_EVENTS.items():
        node = ET.SubElement(root, "event", name=event)
        for key, value in settings.items():
            ET.SubElement(node, "setting", name=key).text = value
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write_etc(etc: Path, settings: Mapping[str, str], *, jfr: bool) -> None:
    """Populate the classpath configuration directory of one run.

    ``mapred-site.xml`` holds every setting, in order (the derived ones, then the user's), so that
    a user's old key name (``mapred.reduce.tasks``, ``io.sort.mb``), which Hadoop maps to its new
    name, is read after the derived new-name value and wins.  In ``core-site.xml`` alone, which
    Hadoop loads first, it had lost to the derived value silently.  ``core-site.xml`` keeps the
    settings that are not ``mapreduce.*`` for the configurations that read only it.
    """
    (etc / "META-INF" / "services").mkdir(parents=True, exist_ok=True)
    write_site_xml(
        etc / "core-site.xml", {k: v for k, v in settings.items() if not k.startswith("mapreduce.")}
    )
    write_site_xml(etc / "mapred-site.xml", dict(settings))
    (etc / PROVIDER_SERVICE).write_text(PROVIDER_CLASS + "\n")
    (etc / "log4j2.properties").write_text(log4j2_properties())
    if jfr:
        (etc / "phaseline.jfc").write_text(jfr_settings())
