"""Getting this package (and its dependencies) to Spark executors that do not have it installed.

* :func:`package_zip` — a zip of the *imported* ``airflow_hudi_etc`` package for ``--py-files``,
  built once and cached in :func:`cache_dir` under a name keyed by the package version and a hash
  of its files (a changed install gets a new zip). Built into a temporary file and renamed into
  place, so concurrent builds are safe (the rename is atomic; both produce the same bytes).
* :func:`submit_settings` — the ``--py-files`` and the interpreter settings of one spark-submit:
  no interpreter is ever forced on executors of a cluster; on ``local[...]`` masters (and for a
  client-mode driver, which runs here) this process's interpreter is the default when the user's
  conf, ``spark-defaults.conf`` and environment name none.
* :func:`pack_env` — ``hudi-etc pack-env``: a fresh virtualenv holding the runtime dependencies
  executors need (the versions installed here), packed as a ``.tar.gz`` for ``spark.archives``.

Imports neither Spark nor Airflow.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path
from typing import Mapping

from ..hudi.errors import HudiEtcError, InvalidInputError

PACKAGE = "airflow_hudi_etc"
DIST = "airflow-hudi-etc"
#: what a Python task on an executor imports (the Hudi layer and the compaction service); msgspec
#: is optional there (a json fallback exists) but makes planning faster
EXECUTOR_DEPS = ("pyarrow", "fastavro", "numpy", "fsspec", "msgspec")
#: extra dependencies per ``pack-env --extra``
EXTRA_DEPS = {"s3": ("s3fs",)}
#: value of ``HUDI_ETC_PY_FILES`` (or the operators' ``py_files``) that ships nothing
NO_PY_FILES = "none"


class ShippingError(HudiEtcError):
    code = "shipping_failed"


# ----------------------------------------------------------------------------- the package zip
def cache_dir() -> Path:
    """``$HUDI_ETC_CACHE_DIR``, else ``$XDG_CACHE_HOME/airflow-hudi-etc``, else ``~/.cache/airflow-hudi-etc``."""
    d = os.environ.get("HUDI_ETC_CACHE_DIR")
    if d:
        return Path(d)
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg) / DIST


def package_root() -> Path:
    """The folder of the ``airflow_hudi_etc`` package this process imported."""
    return Path(__file__).resolve().parents[1]


def package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DIST)
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


def _package_files(root: Path) -> list[tuple[str, Path]]:
    """(name in the zip, file) for every ``.py`` file (and ``py.typed``) of the package, sorted."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__" and not d.startswith("."))
        for f in sorted(filenames):
            if f.endswith(".py") or f == "py.typed":
                p = Path(dirpath) / f
                out.append((f"{PACKAGE}/{p.relative_to(root).as_posix()}", p))
    return out


def package_zip(cache: str | os.PathLike | None = None) -> str:
    """Path of the cached zip of the imported package (built when absent). Key: version + the
    SHA-256 of the files' names and bytes; the zip's bytes are deterministic (fixed timestamps)."""
    root = package_root()
    files = _package_files(root)
    if not files:
        raise ShippingError(f"no Python files under {root}: cannot ship {PACKAGE}")
    h = hashlib.sha256()
    contents = []
    for name, p in files:
        data = p.read_bytes()
        contents.append((name, data))
        h.update(name.encode() + b"\0" + len(data).to_bytes(8, "big") + data)
    d = Path(cache) if cache is not None else cache_dir()
    out = d / f"{PACKAGE}-{package_version()}-{h.hexdigest()[:16]}.zip"
    if out.is_file():
        return str(out)
    try:
        d.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=d, prefix=f".{out.name}.", suffix=".tmp")
    except OSError as e:
        raise ShippingError(f"cannot write the package zip in {d} ({e}); set HUDI_ETC_CACHE_DIR") from e
    try:
        with os.fdopen(fd, "wb") as f, zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, data in contents:
                info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                zf.writestr(info, data)
        os.chmod(tmp, 0o644)  # mkstemp makes it 0600; a worker of another user reads it too
        os.replace(tmp, out)  # atomic: a concurrent build replaces it with the same bytes
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return str(out)


# ----------------------------------------------------------------------------- interpreters
def is_local_master(master: str | None) -> bool:
    """``local``, ``local[N]``, ``local[*]``, ``local[N,F]``, ``local-cluster[...]``: executors on this machine."""
    m = (master or "").strip()
    return m == "local" or m.startswith("local[") or m.startswith("local-cluster[")


def spark_home(env: Mapping[str, str] | None = None) -> str | None:
    env = os.environ if env is None else env
    if env.get("SPARK_HOME"):
        return env["SPARK_HOME"]
    import importlib.util

    spec = importlib.util.find_spec("pyspark")  # the pip install: SPARK_HOME is the package folder
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def spark_defaults(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The properties of ``spark-defaults.conf`` that spark-submit will read
    (``$SPARK_CONF_DIR``, else ``$SPARK_HOME/conf``); ``{}`` when there is none."""
    env = os.environ if env is None else env
    conf_dir = env.get("SPARK_CONF_DIR")
    if not conf_dir:
        home = spark_home(env)
        conf_dir = os.path.join(home, "conf") if home else None
    path = os.path.join(conf_dir, "spark-defaults.conf") if conf_dir else None
    out: dict[str, str] = {}
    if not path or not os.path.isfile(path):
        return out
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            m = re.match(r"([^\s=:]+)\s*[=:\s]\s*(.*)$", line)  # Java properties: key=value, key value
            if m:
                out[m.group(1)] = m.group(2).strip()
            else:
                out[line] = ""
    return out


def submit_settings(master: str | None, *, deploy_mode: str | None = None, conf: Mapping[str, str] | None = None,
                    env: Mapping[str, str] | None = None, py_files: str | None = None) -> dict:
    """What to add to one spark-submit so that our job runs wherever ``master`` puts it.

    Returns ``{"py_files": str | None, "conf": {...}, "env": {...}}``: the ``--py-files`` value
    (``py_files`` as given; ``None`` → the cached package zip; ``"none"`` → nothing), conf and
    environment entries to add (never overriding what the user set in ``conf``, in
    ``spark-defaults.conf`` or in the environment):

    * ``local[...]``: executors run on this machine, so ``PYSPARK_PYTHON`` defaults to this
      interpreter (and ``PYSPARK_DRIVER_PYTHON`` too) when no ``spark.pyspark.python`` is set;
    * any other master, client deploy mode: the driver runs here, so
      ``spark.pyspark.driver.python`` defaults to this interpreter (or ``$PYSPARK_DRIVER_PYTHON``);
      the executors' interpreter is the cluster's business (``spark.pyspark.python``,
      ``$PYSPARK_PYTHON``, else Spark's default ``python3`` on the workers);
    * cluster deploy mode: nothing (the driver runs on the cluster too);
    * ``spark.log.level=WARN`` unless set.
    """
    env = os.environ if env is None else env
    conf = dict(conf or {})
    effective = {**spark_defaults(env), **conf}
    add_conf: dict[str, str] = {}
    add_env: dict[str, str] = {}
    if "spark.log.level" not in effective:
        add_conf["spark.log.level"] = "WARN"  # Spark 3.5+: from the SparkContext's start
    if py_files is None:
        py_files = package_zip()
    elif str(py_files).strip().lower() in (NO_PY_FILES, ""):
        py_files = None
    if is_local_master(master):
        if "spark.pyspark.python" not in effective and "spark.pyspark.driver.python" not in effective:
            if not env.get("PYSPARK_PYTHON"):
                add_env["PYSPARK_PYTHON"] = sys.executable
            if not env.get("PYSPARK_DRIVER_PYTHON"):
                add_env["PYSPARK_DRIVER_PYTHON"] = env.get("PYSPARK_PYTHON") or sys.executable
    elif (deploy_mode or effective.get("spark.submit.deployMode") or "client") == "client":
        if "spark.pyspark.driver.python" not in effective:
            add_conf["spark.pyspark.driver.python"] = env.get("PYSPARK_DRIVER_PYTHON") or sys.executable
    return {"py_files": py_files, "conf": add_conf, "env": add_env}


#: Log4j 2 configuration of a driver started here (warnings and errors only)
QUIET_LOG4J = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2-quiet.properties")
#: PySpark's import-time warning about the pandas version, printed in every task log
PANDAS_WARNING = "ignore:PySpark does not yet fully support pandas:FutureWarning"


def quiet_driver_env(master: str | None, *, deploy_mode: str | None = None, conf: Mapping[str, str] | None = None,
                     env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Environment entries that keep the startup of a driver started here (local master or client
    deploy mode; nothing otherwise) out of the task log: ``SPARK_SUBMIT_OPTS`` points Log4j 2 at
    ``log4j2-quiet.properties`` (warnings and errors from the JVM's first line; Spark's default
    profile logs ~30 INFO lines before ``spark.log.level`` applies) unless a Log4j configuration is
    given (``SPARK_SUBMIT_OPTS``, ``spark.driver.extraJavaOptions``, ``$SPARK_CONF_DIR/log4j2.properties``);
    ``PYTHONWARNINGS`` hides PySpark's pandas-version ``FutureWarning`` unless set."""
    env = os.environ if env is None else env
    conf = {**spark_defaults(env), **dict(conf or {})}
    if not is_local_master(master) and (deploy_mode or conf.get("spark.submit.deployMode") or "client") != "client":
        return {}
    out: dict[str, str] = {}
    opts = env.get("SPARK_SUBMIT_OPTS", "")
    conf_dir = env.get("SPARK_CONF_DIR")
    configured = ("log4j2.configurationFile" in opts or "log4j2.configurationFile" in str(
        conf.get("spark.driver.extraJavaOptions", "")) or (conf_dir and os.path.isfile(
            os.path.join(conf_dir, "log4j2.properties"))))
    if not configured and os.path.isfile(QUIET_LOG4J):
        out["SPARK_SUBMIT_OPTS"] = f"{opts} -Dlog4j2.configurationFile=file:{QUIET_LOG4J}".strip()
    if not env.get("PYTHONWARNINGS"):
        out["PYTHONWARNINGS"] = PANDAS_WARNING
    return out


# ----------------------------------------------------------------------------- pack-env
def dependency_pins(extras: tuple[str, ...] = ()) -> list[str]:
    """``name==version`` of every executor dependency, at the version installed here (the driver's)."""
    from importlib.metadata import PackageNotFoundError, version

    names = list(EXECUTOR_DEPS)
    for x in extras:
        if x not in EXTRA_DEPS:
            raise InvalidInputError(f"unknown extra {x!r}: use one of {sorted(EXTRA_DEPS)}")
        names += EXTRA_DEPS[x]
    pins = []
    for n in names:
        try:
            pins.append(f"{n}=={version(n)}")
        except PackageNotFoundError:
            pins.append(n)
    return pins


def pack_env(output: str, *, extras: tuple[str, ...] = (), python: str | None = None,
             pip_args: tuple[str, ...] = ()) -> dict:
    """Build a virtualenv with the executors' dependencies and pack it as ``output`` (.tar.gz).

    Use it with ``spark.archives=<output>#environment`` and ``spark.pyspark.python=
    ./environment/bin/python``. The venv's ``bin/python`` links to the base interpreter
    (``python``, default this one's base), which must exist at the same path on every worker, as
    with venv-pack. The package itself is not inside: it goes with ``--py-files`` (the default).
    """
    if not output.endswith((".tar.gz", ".tgz")):
        raise InvalidInputError(f"--output {output!r}: must end with .tar.gz or .tgz (what spark.archives unpacks)")
    out = Path(output).resolve()
    if not out.parent.is_dir():
        raise InvalidInputError(f"--output {output!r}: folder {out.parent} does not exist")
    if python and not (os.path.isfile(python) and os.access(python, os.X_OK)):
        raise InvalidInputError(f"--python {python!r}: no such interpreter")
    base_python = python or getattr(sys, "_base_executable", None) or sys.executable
    pins = dependency_pins(tuple(extras))
    with tempfile.TemporaryDirectory(prefix="hudi-etc-pack-env-") as tmp:
        venv = Path(tmp) / "environment"
        _run([base_python, "-m", "venv", str(venv)], "creating the virtualenv")
        vpy = venv / "bin" / "python"
        _run([str(vpy), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-input",
              *pip_args, *pins], "installing " + " ".join(pins))
        probe = subprocess.run([str(vpy), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                               capture_output=True, text=True)
        fd, tmp_out = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
        os.close(fd)
        try:
            with tarfile.open(tmp_out, "w:gz") as tf:
                for child in sorted(venv.iterdir()):
                    tf.add(str(child), arcname=child.name,
                           filter=lambda ti: None if "__pycache__" in ti.name.split("/") else ti)
            os.chmod(tmp_out, 0o644)
            os.replace(tmp_out, out)
        except BaseException:
            try:
                os.unlink(tmp_out)
            except OSError:
                pass
            raise
    here = "%d.%d" % sys.version_info[:2]
    extra = {} if probe.stdout.strip() == here else {
        "warning": f"the packed env has Python {probe.stdout.strip()}, this driver {here}: PySpark refuses "
                   f"workers whose Python minor version differs from the driver's"}
    return {"output": str(out), "bytes": out.stat().st_size, "packages": pins, **extra,
            "python": os.path.realpath(base_python), "python_version": probe.stdout.strip(),
            "spark_conf": {"spark.archives": f"{out}#environment",
                           "spark.pyspark.python": "./environment/bin/python"}}


def _run(cmd: list[str], what: str) -> None:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        raise ShippingError(f"pack-env: {what} failed: {e}") from e
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout or "").splitlines()[-15:])
        raise ShippingError(f"pack-env: {what} failed (exit {proc.returncode}):\n{tail}")
