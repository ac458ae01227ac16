"""Hudi's own lock provider, in the JVM of a Spark-hosted run.

When a command runs inside spark-submit (``--engine spark``, the operators' jobs) and the user's
Hudi bundle is on the driver's classpath (the cluster's Spark, or ``spark.jars``), the table's
lock provider class — any of them: Hive metastore, DynamoDB, ZooKeeper, the file system, Hudi
1.1+'s storage-based one, a user's own — is instantiated there, through py4j, from the same
settings the Java writers use, exactly as Hudi's lock manager builds it: the provider's
``(LockConfiguration, StorageConfiguration)`` constructor (Hudi 0.15+) or ``(LockConfiguration,
Configuration)`` (0.14) with the Spark driver's Hadoop configuration. ``tryLock(ms,
MILLISECONDS)``, ``unlock()`` and ``close()`` are then the provider's own.

:func:`use_jvm` is called by the Spark job once its session exists; :func:`provider` answers None
when no JVM is registered or the class is not on its classpath (the Python providers then serve,
or the provider is refused).
"""

from __future__ import annotations

from . import write_config as wc
from .locks import LockProvider, LockProviderError

_JVM: dict = {}


def use_jvm(spark) -> None:
    """Register the driver JVM of ``spark`` (a SparkSession) for this process's commands."""
    if _JVM.get("jvm") is not spark._jvm:  # noqa: SLF001 - another JVM: its Avro classes are not prepared yet
        _JVM.pop("avro_classes", None)  # (see jvm_metadata.prepare_avro_classes)
    _JVM["jvm"] = spark._jvm  # noqa: SLF001 - py4j's view of the driver JVM
    _JVM["hadoop_conf"] = spark._jsc.hadoopConfiguration()  # noqa: SLF001
    _JVM["gateway"] = spark.sparkContext._gateway  # noqa: SLF001 - for Java arrays
    _JVM["jsc"] = spark._jsc  # noqa: SLF001 - the JavaSparkContext (Hudi's engine context)


def registered() -> bool:
    return "jvm" in _JVM


def _load_class(jvm, name: str):
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    try:
        return jvm.java.lang.Class.forName(name, True, loader)
    except Exception:  # noqa: BLE001 - py4j wraps ClassNotFoundException
        return None


class JvmLock(LockProvider):
    """A Hudi lock provider object living in the driver JVM."""

    def __init__(self, storage, config: wc.WriteConfig, name: str, cls):
        jvm = _JVM["jvm"]
        self.name = f"{name.rsplit('.', 1)[-1]} (Hudi's, in the Spark driver)"
        props = jvm.org.apache.hudi.common.config.TypedProperties()
        for k, v in config.conf.items():
            props.setProperty(k, str(v))
        props.setProperty("hoodie.base.path", storage.uri(""))
        from ..config.properties import load_table_config

        # the table's name and fields, as a Java writer of the table has them (Hudi derives settings
        # from them: the bucket index its hash field), unless the recorded settings name them
        for k, v in wc.table_settings(load_table_config(storage, require_mor=False).raw).items():
            if not config.get(k):
                props.setProperty(k, v)
        try:  # as Hudi's lock manager: the write config's properties, Hudi's defaults applied
            wcfg = (jvm.org.apache.hudi.config.HoodieWriteConfig.newBuilder().withPath(storage.uri(""))
                    .withProperties(props).forTable(props.getProperty("hoodie.table.name")).build())
            props = wcfg.getProps()
        except Exception as e:  # noqa: BLE001 - Java's refusal of the settings
            raise LockProviderError(f"{wc.K_LOCK_PROVIDER}={name}: Hudi's write config refused the recorded "
                                    f"settings: {_java_causes(e)}") from None
        lock_conf = jvm.org.apache.hudi.common.config.LockConfiguration(props)
        hadoop_conf = _JVM["hadoop_conf"]
        last = None
        for ctor in cls.getConstructors():
            types = [t.getName() for t in ctor.getParameterTypes()]
            if len(types) != 2 or types[0] != "org.apache.hudi.common.config.LockConfiguration":
                continue
            try:
                if types[1].endswith("StorageConfiguration"):
                    arg = jvm.org.apache.hudi.storage.hadoop.HadoopStorageConfiguration(hadoop_conf)
                elif types[1] == "org.apache.hadoop.conf.Configuration":
                    arg = hadoop_conf
                else:
                    continue
                args = _JVM["gateway"].new_array(jvm.java.lang.Object, 2)
                args[0], args[1] = lock_conf, arg
                self.provider = ctor.newInstance(args)
                break
            except Exception as e:  # noqa: BLE001 - Java's refusal (a missing setting, an unsupported scheme)
                last = e
        else:
            raise LockProviderError(f"{wc.K_LOCK_PROVIDER}={name}: Hudi's class in the Spark driver could not be "
                                    f"built: {_java_causes(last) if last else 'no (LockConfiguration, configuration) constructor'}")
        self._time_unit = jvm.java.util.concurrent.TimeUnit.MILLISECONDS
        self._held = False
        # Hudi's file-system provider holds no connection, and its close() deletes the lock file
        # whoever made it (every line, 0.14 to 1.2): closed after a failed try, it would remove the
        # lock a Java writer holds; closed after our unlock, the lock a Java writer took in between
        self._close_deletes = name.endswith(".FileSystemBasedLockProvider")
        # the lock file of that provider, to tell whether it is still ours (see still_held)
        self._file = None
        if self._close_deletes and config.get("hoodie.write.lock.filesystem.path") is None and storage.local_paths:
            self._file = storage.full(".hoodie/lock")
        self._identity = None

    def try_lock(self, wait_s: float) -> bool:
        try:
            self._held = bool(self.provider.tryLock(int(max(wait_s, 0) * 1000), self._time_unit))
        except Exception as e:  # noqa: BLE001 - HoodieLockException and friends: not acquired
            self._last = _java_causes(e)
            self._held = False
        self._identity = self._file_identity() if self._held else None
        return self._held

    def _file_identity(self):
        if self._file is None:
            return None
        import os

        try:
            st = os.stat(self._file)
        except FileNotFoundError:
            return None
        return st.st_ino, st.st_mtime_ns

    def still_held(self) -> bool:
        """For Hudi's file-system provider on local files: the lock file is still the one made
        when we took it (a Java writer's ``LockManager.unlock()`` deletes whatever lock file is
        there a second time, through the provider's ``close()``: one taken in between is gone, or
        is another writer's by now)."""
        if not self._held:
            return False
        if self._file is None or self._identity is None:
            return True
        return self._file_identity() == self._identity

    def unlock(self) -> None:
        if self._held:
            # Hudi's file-system provider deletes whatever lock file is there: once ours is gone
            # (a Java writer's release deleted it twice) the file is another writer's, left alone
            if self.still_held():
                self.provider.unlock()
            self._held = False

    def close(self) -> None:
        try:
            self.unlock()
        finally:
            if not self._close_deletes:
                self.provider.close()

    def owner(self) -> str:
        try:
            return str(self.provider.getCurrentOwnerLockInfo() or "")
        except Exception:  # noqa: BLE001 - older lines lack it
            return ""


def _java_causes(e: BaseException) -> str:
    """The chain of Java exceptions behind a py4j error, one line each (Java's own words)."""
    je, out = getattr(e, "java_exception", None), []
    while je is not None and len(out) < 6:
        out.append(str(je.toString()))
        je = je.getCause()
    return "; caused by ".join(out) if out else str(e)[-600:]


def provider(storage, config: wc.WriteConfig) -> LockProvider | None:
    """Hudi's own provider of the table's lock, in the registered driver JVM (None: no JVM, or
    its classpath lacks the class)."""
    name = config.lock_provider
    if name is None or "jvm" not in _JVM:
        return None
    cls = _load_class(_JVM["jvm"], name)
    return None if cls is None else JvmLock(storage, config, name, cls)


__all__ = ["use_jvm", "registered", "provider", "JvmLock"]
