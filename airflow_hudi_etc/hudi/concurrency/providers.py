"""The lock providers by Java class name: ours for the file-system lock wherever our storage creates a
file exclusively and for Hudi 1.1+'s storage-based lock on S3, else Hudi's own class in the driver
JVM of a Spark-hosted run whose classpath has it (:mod:`.jvm_lock`), else the ones this process
implements."""

from __future__ import annotations

from . import write_config as wc
from .fs_lock import FileSystemLock
from .locks import LockProvider, LockProviderError
from .storage_lock import StorageLock
from .zookeeper import ZookeeperLock

#: provider class name -> factory(storage, WriteConfig) -> LockProvider
PROVIDERS = {wc.FILE_SYSTEM: FileSystemLock, wc.ZOOKEEPER: ZookeeperLock, wc.STORAGE_BASED: StorageLock}


def provider_for(storage, config: wc.WriteConfig) -> LockProvider | None:
    """The lock provider the table's writers use (None: no lock is configured and none is needed)."""
    name = config.lock_provider
    if name is None:
        if config.multi_writer:
            raise LockProviderError(f"{wc.K_CONCURRENCY_MODE}={config.concurrency_mode} needs "
                                    f"{wc.K_LOCK_PROVIDER}: record the one the table's Java writers use "
                                    "(hudi-etc configure --hoodie KEY=VALUE)")
        return None
    if name == wc.STORAGE_BASED and storage.conditional_replace:
        # ours, also in a Spark-hosted run: Hudi's class needs hudi-aws (its S3 client) on the
        # driver's classpath, which the Spark bundle lacks, and credentials of its own; ours takes
        # the table's storage options and writes the same lease (tests/java/test_java_storage_lock.py)
        return StorageLock(storage, config)
    if name == wc.FILE_SYSTEM:
        # ours, also in a Spark-hosted run, wherever our storage creates a file exclusively: Hudi's
        # class is not exclusive (0.14 answers "acquired" on a file another writer created between
        # its two checks; Hadoop's local file system checks, then opens) and its close() deletes
        # whoever's lock file is there; ours creates with O_EXCL semantics and tells by the file's
        # bytes whether the lock is still its own
        try:
            return FileSystemLock(storage, config)
        except LockProviderError:
            pass  # a lock folder ours cannot create in exclusively: Hudi's class, where there is one
    from . import jvm_lock

    jvm = jvm_lock.provider(storage, config)  # a Spark-hosted run with Hudi's bundle: Hudi's own class
    if jvm is not None:
        return jvm
    factory = PROVIDERS.get(name)
    if factory is None:
        raise LockProviderError(
            f"{wc.K_LOCK_PROVIDER}={name}: this process can take {sorted(PROVIDERS)} itself; any other "
            "provider is taken through Hudi's own lock manager in a Spark-hosted run with the Hudi bundle "
            "on the driver's classpath (--engine spark, the operators)")
    return factory(storage, config)


__all__ = ["PROVIDERS", "provider_for"]
