"""Hudi's Avro classes in a Spark-hosted driver (airflow_hudi_etc/hudi/concurrency/jvm_metadata.py,
``prepare_avro_classes``): with the Hudi 1.0.2 bundle in ``spark.jars``, a read of a timeline file
on a thread whose context class loader cannot see the bundle — Java 17's ForkJoinPool common-pool
threads, which run Hudi 1.0's parallel ``HoodieListData``, have the JVM's application loader —
makes Avro cache "no class" for the record's name, and from then on every read of it, on any
thread, fails with ``GenericData$Record cannot be cast``. Our preparation repairs that cache and
fills it on a thread with the bundle's loader, after which such a thread reads the classes.

The common-pool thread is played by the py4j thread with the application loader as its context
loader (what the JDK gives common-pool threads): a fresh pyspark driver of the 1.0 line's venv,
started as spark-submit starts one, in a child process."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from java_hudi import REPO, line_files, unavailable_reason

pytestmark = [pytest.mark.java, pytest.mark.slow]  # a driver of its own: ~22 s, outside the CI budget

SCRIPT = r"""
import json, sys
sys.path.insert(0, sys.argv[2])
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[1]").config("spark.jars", sys.argv[1])
         .config("spark.ui.enabled", "false").getOrCreate())
from airflow_hudi_etc.hudi.concurrency import jvm_metadata
from airflow_hudi_etc.hudi.concurrency.jvm_lock import use_jvm
use_jvm(spark)
jvm = spark._jvm
thread = jvm.java.lang.Thread.currentThread()
bundle_loader = thread.getContextClassLoader()
app_loader = jvm.java.lang.ClassLoader.getSystemClassLoader()
m = jvm.org.apache.hudi.avro.model
utils = jvm.org.apache.hudi.common.table.timeline.TimelineMetadataUtils
plan_cls = jvm.java.lang.Class.forName("org.apache.hudi.avro.model.HoodieRollbackPlan", True, bundle_loader)
plan = (m.HoodieRollbackPlan.newBuilder()
        .setInstantToRollback(m.HoodieInstantInfo.newBuilder().setCommitTime("1").setAction("deltacommit").build())
        .setRollbackRequests(jvm.java.util.ArrayList()).setVersion(1).build())
data = utils.serializeAvroMetadata(plan, plan_cls).get()
# called through reflection: py4j finds a class named in a call through the context loader
gateway = spark.sparkContext._gateway
types = gateway.new_array(jvm.java.lang.Class, 2)
types[0], types[1] = jvm.java.lang.Class.forName("java.io.InputStream"), jvm.java.lang.Class.forName("java.lang.Class")
method = jvm.java.lang.Class.forName(
    "org.apache.hudi.common.table.timeline.TimelineMetadataUtils", True, bundle_loader).getMethod(
    "deserializeAvroMetadata", types)

def read(loader):
    # Hudi's read of a rollback plan's bytes, on this thread with ``loader`` as context loader
    args = gateway.new_array(jvm.java.lang.Object, 2)
    args[0], args[1] = jvm.java.io.ByteArrayInputStream(data), plan_cls
    thread.setContextClassLoader(loader)
    try:
        r = method.invoke(None, args)
    except Exception as e:
        return str(e.java_exception.getCause().toString())  # (InvocationTargetException's cause)
    finally:
        thread.setContextClassLoader(bundle_loader)
    return [str(r.getClass().getName()), str(r.getInstantToRollback().getClass().getName())]

out = {"bundle_loader": str(bundle_loader), "app_loader": str(app_loader)}
out["first_read_on_app_loader"] = read(app_loader)
out["then_on_bundle_loader"] = read(bundle_loader)
prep = jvm_metadata.prepare_avro_classes()
out["prepared"] = {k: prep[k] for k in ("classes", "names", "repaired", "unresolved")}
out["after_on_app_loader"] = read(app_loader)
out["after_on_bundle_loader"] = read(bundle_loader)
spark.stop()
print("RESULT " + json.dumps(out))
"""


def test_a_first_read_on_a_thread_without_the_bundle_no_longer_poisons_hudis_avro_classes(tmp_path):
    why = unavailable_reason("1.0")
    if why:
        if os.environ.get("HUDI_ETC_JAVA_REQUIRED") == "1":
            pytest.fail(why)
        pytest.skip(why)
    py, jar = line_files("1.0")
    script = tmp_path / "probe.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, TZ="UTC", SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=str(py),
               SPARK_LOCAL_DIRS=str(tmp_path))
    for k in ("PYTHONPATH", "SPARK_HOME", "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV"):
        env.pop(k, None)
    r = subprocess.run([str(py), str(script), str(jar), str(REPO)], capture_output=True, text=True, env=env,
                       timeout=600, cwd=tmp_path)
    lines = [x for x in r.stdout.splitlines() if x.startswith("RESULT ")]
    assert r.returncode == 0 and lines, (r.stdout[-3000:], r.stderr[-3000:])
    out = json.loads(lines[-1][len("RESULT "):])
    assert "MutableURLClassLoader" in out["bundle_loader"] and "AppClassLoader" in out["app_loader"], out
    # the bug, as Hudi 1.0 meets it: a first read where the bundle is not visible caches "no class",
    # and the read fails after that on a thread that sees the bundle too
    for k in ("first_read_on_app_loader", "then_on_bundle_loader"):
        assert "GenericData$Record cannot be cast" in str(out[k]), out
    # prepared: the poisoned names repaired, every class of the bundle's model package resolved
    prep = out["prepared"]
    assert prep["unresolved"] == [] and prep["classes"] >= 50, prep
    assert {"HoodieRollbackPlan:org.apache.hudi.avro.model.HoodieRollbackPlan",
            "HoodieRollbackPlan:org.apache.hudi.avro.model.HoodieInstantInfo"} <= set(prep["repaired"]), prep
    want = ["org.apache.hudi.avro.model.HoodieRollbackPlan", "org.apache.hudi.avro.model.HoodieInstantInfo"]
    assert out["after_on_app_loader"] == want and out["after_on_bundle_loader"] == want, out
