"""S3 (``s3://``, ``s3a://`` through s3fs): an object store whose create is *conditional*.

An object PUT is atomic (a reader never sees a half-written object), and the write-once create
is ``PutObject`` with ``If-None-Match: *`` (s3fs ``pipe_file(..., mode="create")``; a multipart
upload sends it on ``CompleteMultipartUpload``). S3 answers ``412 Precondition Failed`` when the
key exists, which becomes :class:`InstantExistsError`; ``409 ConditionalRequestConflict`` (a
concurrent conditional write of the same key in progress) is reported the same way. AWS S3
supports this since August 2024, and moto (the tests' server) implements it; check an
S3-compatible store before relying on it: one that *ignores* the header silently overwrites, and
on such a store the single-writer rule of :mod:`.fsspec_store` applies.

A conditional *replace* (:meth:`S3.put_if_version`) is ``PutObject`` with ``If-Match`` on the
ETag read before (S3 since November 2024; moto since 5.1.5): what Hudi 1.1+'s
``StorageBasedLockProvider`` builds its lock on.

Listings are never served from s3fs's directory cache (``use_listings_cache=False`` unless the
options say otherwise): the compaction commands and the writer re-list the timeline to see other
processes' instants.
"""

from __future__ import annotations

from ..errors import InstantExistsError, InvalidInputError
from .names import redact_uri
from .fsspec_store import ObjectStore


class S3(ObjectStore):
    """A table in an S3 bucket (or an S3-compatible store that honours ``If-None-Match``)."""

    atomic_create = True
    conditional_replace = True
    install_hint = " (pip install 'airflow-hudi-etc[s3]')"

    def _fs_options(self) -> dict:
        opts = dict(self.options)
        # other processes write the timeline: a cached listing would hide their instants
        opts.setdefault("use_listings_cache", False)
        return opts

    def _put_object(self, target: str, data: bytes, if_absent: bool) -> None:
        try:
            super()._put_object(target, data, if_absent)
        except OSError as e:
            # 409 ConditionalRequestConflict: another conditional write of this key in flight
            said = f"{e} {e.__cause__ or ''}"
            if if_absent and "ConditionalRequestConflict" in said:
                raise InstantExistsError(f"{self._rel_of(target)}: a concurrent write of the same name") from None
            raise

    def _bucket_key(self, rel: str) -> tuple[str, str]:
        bucket, key, _ = self.fs.split_path(self.full(rel))
        return bucket, key

    def read_versioned(self, rel: str) -> tuple[bytes, str] | None:
        from fsspec.asyn import sync

        bucket, key = self._bucket_key(rel)

        async def get():
            r = await self.fs._call_s3("get_object", Bucket=bucket, Key=key)  # noqa: SLF001 - s3fs's request path
            async with r["Body"] as body:
                return await body.read(), r["ETag"]

        try:
            return sync(self.fs.loop, get)
        except FileNotFoundError:
            return None

    def put_if_version(self, rel: str, data: bytes, version: str | None) -> str | None:
        bucket, key = self._bucket_key(rel)
        cond = {"IfNoneMatch": "*"} if version is None else {"IfMatch": version}
        try:
            r = self.fs.call_s3("put_object", Bucket=bucket, Key=key, Body=bytes(data), **cond)
        except FileNotFoundError:  # If-Match on an object deleted since (or a missing bucket)
            if version is None:
                raise InvalidInputError(f"cannot write {rel}: the location {redact_uri(self.base_uri)} does not "
                                        "exist (missing bucket?)") from None
            return None
        except OSError as e:
            said = f"{e} {e.__cause__ or ''}"
            # 412 PreconditionFailed: changed (or created) by another writer; 409
            # ConditionalRequestConflict: another conditional write of the key in flight
            if "PreconditionFailed" in said or "ConditionalRequestConflict" in said or isinstance(e, FileExistsError):
                return None
            raise
        return r["ETag"]
