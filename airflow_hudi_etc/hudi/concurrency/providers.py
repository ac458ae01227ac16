"""The lock providers this process can take itself, by Java class name."""

from __future__ import annotations

from . import write_config as wc
from .fs_lock import FileSystemLock
from .locks import LockProvider, LockProviderError
from .zookeeper import ZookeeperLock

#: provider class name -> factory(storage, WriteConfig) -> LockProvider
PROVIDERS = {wc.FILE_SYSTEM: FileSystemLock, wc.ZOOKEEPER: ZookeeperLock}


def provider_for(storage, config: wc.WriteConfig) -> LockProvider | None:
    """The lock provider the table's writers use (None: no lock is configured and none is needed)."""
    name = config.lock_provider
    if name is None:
        if config.multi_writer:
            raise LockProviderError(f"{wc.K_CONCURRENCY_MODE}={config.concurrency_mode} needs "
                                    f"{wc.K_LOCK_PROVIDER}: record the one the table's Java writers use "
                                    "(hudi-etc configure --hoodie KEY=VALUE)")
        return None
    factory = PROVIDERS.get(name)
    if factory is None:
        raise LockProviderError(
            f"{wc.K_LOCK_PROVIDER}={name}: this process can take {sorted(PROVIDERS)} itself; any other "
            "provider is taken through Hudi's own lock manager in a Spark-hosted run with the Hudi bundle "
            "on the driver's classpath (--engine spark, the operators)")
    return factory(storage, config)


__all__ = ["PROVIDERS", "provider_for"]
