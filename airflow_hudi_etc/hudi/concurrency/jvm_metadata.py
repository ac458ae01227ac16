"""Hudi's metadata table (MDT), kept exact from every commit of ours by Hudi's own metadata writer,
in the JVM of a Spark-hosted run (shared/metadata-table.md §6).

Every Hudi reader lists files only through the MDT once it exists, with no fallback: files of an
instant the MDT never heard of are invisible, files it still lists after we deleted them fail the
query. So each instant a command of ours completes is applied to the MDT inside the commit path
(:mod:`.transaction`: under the table's lock, after the conflict check, before the instant
completes), the way Java's ``BaseHoodieWriteClient`` does: Hudi's own
``HoodieTableMetadataWriter`` of the bundle on the driver's classpath (``SparkMetadataWriterFactory``
on 1.0.2+, ``SparkHoodieBackedTableMetadataWriter`` before) receives our commit, clean or rollback
metadata and writes the HFile blocks, the MDT timeline and, on 1.x, the column stats, partition
stats and record index computed from our files.

The writer's settings are the table's: the MDT partitions ``hoodie.properties`` lists, and only
those, are enabled (a partition left out would be dropped, one added would be built from
scratch), the table version is kept, and the settings recorded with ``configure --hoodie``
(``hoodie.metadata.*`` among them) are passed on.

Runs without a JVM (plain Python, an Airflow worker) cannot do this: :func:`require_writable`
refuses them, typed, naming the Spark-hosted way.

Before the first call into Hudi, :func:`prepare_avro_classes` makes Avro resolve every Avro class
of the bundle once, on this thread (whose context class loader sees the bundle). Avro finds a
record's generated class through its own class loader, then the calling thread's context class
loader, and caches the answer for good, a miss too. With the bundle in ``spark.jars`` (Spark's
``MutableURLClassLoader``), Avro's own loader (the JVM's application loader) never sees it, and on
Java 9+ the ForkJoinPool common-pool threads that run Hudi 1.0's parallel streams
(``HoodieListData``) have the application loader as their context loader: a first resolution
there caches "no class" and every later read of that record, on any thread, is a
``GenericData$Record`` that fails to cast (Hudi issue #13410, fixed in Hudi 1.1).
"""

from __future__ import annotations

import json
import posixpath
import re
import zipfile

from ..errors import MetadataTablePresentError, UnsupportedFeatureError
from ..format import FormatProfile, profile_for
from ..logformat.names import parse_log_file_name
from ..timeline.active import Action
from . import write_config as wc
from .jvm_lock import _JVM, _java_causes, _load_class
from .locks import check_still_held

MDT_DIR = ".hoodie/metadata"
K_PARTITIONS = "hoodie.table.metadata.partitions"
K_INFLIGHT = "hoodie.table.metadata.partitions.inflight"
#: MDT partition -> the write setting that keeps it (all others are set false)
_INDEX_FLAGS = {
    "column_stats": "hoodie.metadata.index.column.stats.enable",
    "bloom_filters": "hoodie.metadata.index.bloom.filter.enable",
    "record_index": "hoodie.metadata.record.index.enable",
    "partition_stats": "hoodie.metadata.index.partition.stats.enable",
}
_FACTORY_1X = "org.apache.hudi.metadata.SparkMetadataWriterFactory"
_WRITER_0X = "org.apache.hudi.metadata.SparkHoodieBackedTableMetadataWriter"
#: the package of Hudi's Avro-generated classes (timeline plans and metadata, the MDT's records)
_AVRO_MODEL = "org.apache.hudi.avro.model"
#: the classes Hudi's timeline and metadata table read, for a bundle whose jar cannot be listed
_AVRO_MODEL_READ = ("HoodieCommitMetadata", "HoodieReplaceCommitMetadata", "HoodieRequestedReplaceMetadata",
                    "HoodieCleanerPlan", "HoodieCleanMetadata", "HoodieRollbackPlan", "HoodieRollbackMetadata",
                    "HoodieRestorePlan", "HoodieRestoreMetadata", "HoodieSavepointMetadata", "HoodieCompactionPlan",
                    "HoodieClusteringPlan", "HoodieIndexPlan", "HoodieIndexCommitMetadata", "HoodieArchivedMetaEntry",
                    "HoodieLSMTimelineInstant", "HoodieMetadataRecord", "HoodieDeleteRecordList",
                    "HoodieInstantInfo", "HoodieWriteStat")


def split_partitions(v) -> tuple[str, ...]:
    """A comma-separated list of metadata-table partitions (``hoodie.properties``)."""
    return tuple(p.strip() for p in str(v or "").split(",") if p.strip())


def folder_exists(storage) -> bool:
    """Is there a ``.hoodie/metadata`` folder (initialised or not)?"""
    return storage.is_dir(MDT_DIR)


def _props(storage) -> dict:
    from ..config.properties import read_table_properties

    return dict(read_table_properties(storage))


def present(storage, props: dict | None = None) -> bool:
    """Does the table have a metadata table (listed partitions, inflight ones, or the folder)?"""
    props = _props(storage) if props is None else props
    return bool(split_partitions(props.get(K_PARTITIONS)) or split_partitions(props.get(K_INFLIGHT))
                or folder_exists(storage))


def available() -> bool:
    """A Spark-hosted run whose driver classpath has Hudi's metadata writer."""
    return "jvm" in _JVM and (_load_class(_JVM["jvm"], _FACTORY_1X) is not None
                              or _load_class(_JVM["jvm"], _WRITER_0X) is not None)


def _avro_model_classes(jvm, anchor) -> list[str]:
    """The Avro classes of the bundle that holds ``anchor`` (a class of the model package): the
    jar's entries when it is a local file (the driver's copy of ``spark.jars``), else the classes
    the timeline and metadata table read."""
    try:
        url = anchor.getProtectionDomain().getCodeSource().getLocation()
        if str(url.getProtocol()) == "file":
            prefix = _AVRO_MODEL.replace(".", "/") + "/"
            with zipfile.ZipFile(str(jvm.java.io.File(url.toURI()).getPath())) as z:
                names = [n[:-len(".class")].replace("/", ".") for n in z.namelist()
                         if n.startswith(prefix) and n.endswith(".class") and "$" not in n
                         and "/" not in n[len(prefix):]]
            if names:
                return sorted(names)
    except Exception:  # noqa: BLE001 - not a readable local jar (a class folder, a remote URL)
        pass
    return [f"{_AVRO_MODEL}.{n}" for n in _AVRO_MODEL_READ]


def prepare_avro_classes() -> dict:
    """Make Avro resolve every Avro class of the bundle in the registered JVM on this thread, with
    the bundle's class loader as the thread's context loader, once per JVM (see the module's
    doc): each class's own ``SpecificData`` (``MODEL$``, which its reads use) and the shared one
    (``SpecificData.get()``) learn every named type of its schema, so no later first resolution
    falls on a thread that cannot see the bundle. A name already cached as "no class" (Hudi code
    that ran before in this JVM, on such a thread) is forgotten and resolved again. Answers
    {"classes", "names", "repaired", "unresolved"} (empty when the bundle has no Avro classes)."""
    if "jvm" not in _JVM:
        return {}
    if "avro_classes" in _JVM:
        return _JVM["avro_classes"]
    from py4j.java_gateway import JavaObject
    jvm = _JVM["jvm"]
    anchor = _load_class(jvm, f"{_AVRO_MODEL}.HoodieCommitMetadata")
    if anchor is None:
        _JVM["avro_classes"] = {}
        return {}
    loader = anchor.getClassLoader()
    thread = jvm.java.lang.Thread.currentThread()
    before = thread.getContextClassLoader()
    thread.setContextClassLoader(loader)  # the loader that defined the bundle's classes, whatever this thread had
    out = {"classes": 0, "names": 0, "repaired": [], "unresolved": []}
    try:
        # py4j looks a class up on each attribute path: once here, not per class
        forname = jvm.java.lang.Class.forName
        base = forname("org.apache.avro.specific.SpecificRecordBase", False, loader)
        specific = forname("org.apache.avro.specific.SpecificData", False, loader)
        data_cls, parser_cls = jvm.org.apache.avro.specific.SpecificData, getattr(jvm.org.apache.avro, "Schema$Parser")
        array_list = jvm.java.util.ArrayList
        shared = data_cls.get()
        cache_field = None
        for name in _avro_model_classes(jvm, anchor):
            try:
                cls = forname(name, True, loader)
                if not base.isAssignableFrom(cls):
                    continue
                model = data_cls.getForClass(cls)
                parser = parser_cls()
                parser.parse(cls.getField("SCHEMA$").get(None).toString())
                # every named type of the schema; the Java Map's own values(): py4j's map proxy has
                # Python's, which would fetch each entry and send them back as a new list
                types = array_list(JavaObject.__getattr__(parser.getTypes(), "values")())
            except Exception:  # noqa: BLE001 - not a generated record class
                continue
            out["classes"] += 1
            # by index: py4j's iterator ends on a Java exception, which pyspark's handler converts
            # at the cost of a dozen more calls
            for schema in (types.get(i) for i in range(types.size())):
                out["names"] += 1
                for data in (model, shared):
                    if data.getClass(schema) is not None:
                        continue
                    # cached as "no class" before us: forget that answer (Avro's per-instance
                    # name -> class cache) and resolve again on this thread
                    full = str(schema.getFullName())
                    try:
                        if cache_field is None:
                            cache_field = specific.getDeclaredField("classCache")
                            cache_field.setAccessible(True)
                        cache_field.get(data).remove(full)
                        ok = data.getClass(schema) is not None
                    except Exception:  # noqa: BLE001 - another Avro: the cache cannot be reached
                        ok = False
                    (out["repaired"] if ok else out["unresolved"]).append(f"{name.rsplit('.', 1)[-1]}:{full}")
    finally:
        thread.setContextClassLoader(before)
    _JVM["avro_classes"] = out
    return out


def _bundle_version() -> str:
    jvm = _JVM["jvm"]
    try:
        return str(jvm.org.apache.hudi.common.table.HoodieTableVersion.current().versionCode())
    except Exception:  # noqa: BLE001
        return "?"


def _profile(props: dict) -> FormatProfile:
    """The format profile of the table whose properties are ``props`` (version 6 without the key)."""
    return profile_for(int(props.get("hoodie.table.version", "6")))


def require_writable(storage, props: dict) -> None:
    """Refuse (``metadata_table_present``), before anything is written, a table with a metadata
    table this run cannot keep exact; pass a table without one."""
    parts, inflight = split_partitions(props.get(K_PARTITIONS)), split_partitions(props.get(K_INFLIGHT))
    if not present(storage, props):
        return
    if not available():
        raise MetadataTablePresentError(
            "the table has a Hudi metadata table (" + (f"{K_PARTITIONS}={','.join(parts)}" if parts else
                                                       f"{MDT_DIR}/ exists") + "): every reader lists files "
            "through it, so each commit must update it. This run has no Hudi metadata writer: run the command "
            "Spark-hosted (--engine spark, or the operators' Spark jobs) with the Hudi bundle the table's writers "
            "use on the driver's classpath (spark.jars in HUDI_ETC_SPARK_CONF or the operator's conf), where Hudi's "
            "own metadata writer applies our commits. Or set hoodie.metadata.enable=false on every Java writer and "
            "run `hudi-etc drop-metadata-table`")
    if inflight:
        raise MetadataTablePresentError(
            f"{K_INFLIGHT}={','.join(inflight)}: a metadata-table index is being built by a Java writer or "
            "indexer; run this command again once it is complete (nothing was written)")
    unknown = [p for p in parts if p != "files" and p not in _INDEX_FLAGS]
    if unknown:
        raise UnsupportedFeatureError(
            f"{K_PARTITIONS} lists {','.join(unknown)}: secondary and expression indexes are kept only by Java "
            "writers' index definitions; hudi-etc refuses to commit next to them (nothing was written)")
    if "files" not in parts:
        raise MetadataTablePresentError(
            f"{MDT_DIR}/ exists but {K_PARTITIONS} does not list files: the metadata table is not initialised "
            "(a Java writer builds it on its next commit, or `hudi-etc drop-metadata-table` removes it)")
    if "record_index" in parts and not _profile(props).java_1x:
        raise UnsupportedFeatureError(
            "the metadata table has record_index on table version 6: Hudi 0.x does not derive its records "
            "from commit metadata, so hudi-etc cannot keep it exact (nothing was written)")


class MetadataWriter:
    """One Hudi ``HoodieTableMetadataWriter`` of the driver JVM, for one instant of ours."""

    def __init__(self, storage, config: wc.WriteConfig, props: dict, instant: str):
        prepare_avro_classes()  # before Hudi reads any timeline file in this JVM
        jvm = _JVM["jvm"]
        self.jvm, self.instant, self.storage = jvm, instant, storage
        profile = _profile(props)
        self.version = profile.table_version
        base = storage.uri("")  # the table location as Hudi in the JVM names it
        tp = jvm.org.apache.hudi.common.config.TypedProperties()
        for k, v in config.conf.items():
            tp.setProperty(k, str(v))
        parts = set(split_partitions(props.get(K_PARTITIONS)))
        settings = {"hoodie.base.path": base, "hoodie.table.name": props.get("hoodie.table.name", ""),
                    "hoodie.metadata.enable": "true", "hoodie.embed.timeline.server": "false",
                    **{flag: "true" if p in parts else "false" for p, flag in _INDEX_FLAGS.items()}}
        if profile.java_1x or _load_class(jvm, _FACTORY_1X) is not None:
            settings.update({"hoodie.write.table.version": str(self.version), "hoodie.write.auto.upgrade": "false"})
        for k, v in wc.table_settings(props).items():  # the key and fields, as the Java writers name them
            settings.setdefault(k, v)
        for k, v in settings.items():
            tp.setProperty(k, v)
        hadoop_conf = _JVM["hadoop_conf"]
        try:
            self.write_config = (jvm.org.apache.hudi.config.HoodieWriteConfig.newBuilder().withPath(base)
                                 .withProperties(tp).forTable(settings["hoodie.table.name"]).build())
            ctx = jvm.org.apache.hudi.client.common.HoodieSparkEngineContext(_JVM["jsc"])
            opt = jvm.org.apache.hudi.common.util.Option.of(instant)
            if _load_class(jvm, _FACTORY_1X) is not None:
                sconf = jvm.org.apache.hudi.storage.hadoop.HadoopStorageConfiguration(hadoop_conf)
                meta = (jvm.org.apache.hudi.common.table.HoodieTableMetaClient.builder().setConf(sconf)
                        .setBasePath(base).build())
                self.writer = jvm.org.apache.hudi.metadata.SparkMetadataWriterFactory.create(
                    sconf, self.write_config, ctx, opt, meta.getTableConfig())
                self.line = "1.x"
            else:
                cls = jvm.org.apache.hudi.metadata.SparkHoodieBackedTableMetadataWriter
                if _load_class(jvm, "org.apache.hudi.storage.hadoop.HadoopStorageConfiguration") is not None:  # 0.15, 1.0
                    sconf = jvm.org.apache.hudi.storage.hadoop.HadoopStorageConfiguration(hadoop_conf)
                    self.writer = cls.create(sconf, self.write_config, ctx, opt)
                else:  # 0.14: a Hadoop Configuration
                    self.writer = cls.create(hadoop_conf, self.write_config, ctx, opt)
                self.line = "0.x"
        except MetadataTablePresentError:
            raise
        except Exception as e:  # noqa: BLE001 - Java refused: nothing of this instant is visible yet
            raise MetadataTablePresentError(f"Hudi's metadata writer (table version {self.version}, bundle "
                                            f"{_bundle_version()}) could not be opened: {_java_causes(e)}") from None
        if not self.writer.isInitialized():
            self.close()
            raise MetadataTablePresentError(
                "Hudi's metadata writer found the metadata table not initialised (a pending instant blocks its "
                "bootstrap); nothing was written. Let a Java writer commit once, then run this command again")

    # ------------------------------------------------------------------ conversions
    def _commit_metadata(self, data: bytes):
        jvm = self.jvm
        text = data.decode("utf-8") if data[:1] == b"{" else json.dumps(_avro_commit_to_json(data))
        return jvm.org.apache.hudi.common.model.HoodieCommitMetadata.fromJsonString(
            text, _load_class(jvm, "org.apache.hudi.common.model.HoodieCommitMetadata"))

    def _avro(self, data: bytes, cls_name: str):
        jvm = self.jvm
        utils = jvm.org.apache.hudi.common.table.timeline.TimelineMetadataUtils
        cls = _load_class(jvm, cls_name)
        jbytes = bytearray(data)  # py4j passes it as byte[]
        try:
            return utils.deserializeAvroMetadata(jbytes, cls)  # 0.x: (byte[], Class)
        except Exception:  # noqa: BLE001 - 1.x: (InputStream, Class), or the legacy (byte[], Class)
            try:
                return utils.deserializeAvroMetadata(jvm.java.io.ByteArrayInputStream(jbytes), cls)
            except Exception:  # noqa: BLE001
                return utils.deserializeAvroMetadataLegacy(jbytes, cls)

    # ------------------------------------------------------------------ updates
    def commit(self, data: bytes) -> None:
        """A deltacommit or compaction commit of ours (its completed file's bytes)."""
        cm = self._commit_metadata(data)
        if self.line == "0.x":
            empty = self.jvm.org.apache.hudi.data.HoodieJavaRDD.of(_JVM["jsc"].emptyRDD())
            self.writer.update(cm, empty, self.instant)
        else:
            self.writer.update(cm, self.instant)

    def clean(self, data: bytes) -> None:
        self.writer.update(self._avro(data, "org.apache.hudi.avro.model.HoodieCleanMetadata"), self.instant)

    def rollback(self, data: bytes) -> None:
        self.writer.update(self._avro(data, "org.apache.hudi.avro.model.HoodieRollbackMetadata"), self.instant)

    def close(self) -> None:
        try:
            self.writer.close()
        except Exception:  # noqa: BLE001 - closing never hides the update's own outcome
            pass


def listing_readable(storage) -> bool:
    """Can this run list the table's files through its metadata table: Spark-hosted with Hudi's
    reader on the classpath, and the ``files`` partition built (listed, not inflight)? Reads
    hoodie.properties afresh (one small read): the request's copy is from before planning waited
    for a pending write, and a Java writer rebuilding the metadata table meanwhile marks ``files``
    inflight there, when its listing is not to be trusted."""
    if "jvm" not in _JVM:
        return False
    props = _props(storage)
    return "files" in split_partitions(props.get(K_PARTITIONS)) and "files" not in split_partitions(props.get(K_INFLIGHT))


def listing(storage, partitions=None) -> dict[str, dict[str, int]]:
    """The metadata table's file listing, read by Hudi's own reader of the bundle in the driver
    JVM (``HoodieBackedTableMetadata``): {partition ("" unpartitioned): {file name: size}}; of
    ``partitions`` only (table-relative), when given, else of every partition it lists."""
    from py4j.java_gateway import JavaObject

    prepare_avro_classes()  # before Hudi reads any timeline file in this JVM
    jvm = _JVM["jvm"]
    base = storage.uri("")
    ctx = jvm.org.apache.hudi.client.common.HoodieSparkEngineContext(_JVM["jsc"])
    mcfg = jvm.org.apache.hudi.common.config.HoodieMetadataConfig.newBuilder().enable(True).build()
    if _load_class(jvm, "org.apache.hudi.storage.HoodieStorageUtils") is not None:  # 0.15+
        sconf = jvm.org.apache.hudi.storage.hadoop.HadoopStorageConfiguration(_JVM["hadoop_conf"])
        hs = jvm.org.apache.hudi.storage.HoodieStorageUtils.getStorage(base, sconf)
        md = jvm.org.apache.hudi.metadata.HoodieBackedTableMetadata(ctx, hs, mcfg, base)
    else:  # 0.14: Hadoop's Path and FileStatus
        md = jvm.org.apache.hudi.metadata.HoodieBackedTableMetadata(ctx, mcfg, base)
    try:
        rels = ["" if p in ("", ".") else p for p in (
            _partition_paths(md.getAllPartitionPaths()) if partitions is None else sorted(set(partitions)))]
        out: dict[str, dict[str, int]] = {rel: {} for rel in rels}
        if rels:
            # every partition's record in one lookup (Hudi opens a reader per partition asked
            # for separately), the folders asked for as one Java list made in one call, and the
            # answer as one text: a py4j call costs a round trip to the JVM (milliseconds on a
            # loaded machine; per partition and per file they were most of planning on S3)
            root = base.rstrip("/")
            pattern = jvm.java.util.regex.Pattern  # (py4j finds no Arrays.asList for a String[])
            asked = pattern.compile(pattern.quote("\0")).splitAsStream(
                "\0".join(root + (f"/{rel}" if rel else "") for rel in rels)).collect(
                jvm.java.util.stream.Collectors.toList())
            got = md.getAllFilesInPartitions(asked)
            # Java's text of the map's values: per partition a list (0.15+: StoragePathInfo) or
            # an array (0.14: FileStatus) of its files, each named by its full path
            # (py4j's dict face of a Java map shadows Map.values: the Java method is asked for by name)
            values = JavaObject.__getattr__(got, "values")()
            text = str(jvm.java.util.Arrays.deepToString(values.toArray()))
            found = _LISTED.findall(text)
            if len(found) != text.count("{path="):
                raise MetadataTablePresentError(
                    f"Hudi's metadata reader's listing of {len(rels)} partitions did not parse "
                    f"({len(found)} files read of {text.count('{path=')})")
            folder_of: dict[str, str] = {}
            for path, size in found:
                folder, _, name = path.rpartition("/")
                rel = folder_of.get(folder)
                if rel is None:
                    rel = folder_of[folder] = _partition_of(folder, base, rels)
                out[rel][name] = int(size)
    except MetadataTablePresentError:
        raise
    except Exception as e:  # noqa: BLE001 - e.g. an instant archived while Hudi's reader read it
        raise MetadataTablePresentError(f"Hudi's metadata reader failed: {_java_causes(e)}") from None
    finally:
        md.close()
    return out


def _partition_paths(parts) -> list[str]:
    """The partition paths of Hudi's list of them, read from its one text ("[a, b]") when that
    splits into exactly as many, else one by one."""
    text, n = str(parts.toString()), int(parts.size())
    if n == 0:
        return []
    if text.startswith("[") and text.endswith("]"):
        names = text[1:-1].split(", ")
        if len(names) == n:
            return names
    return [str(p) for p in parts]


def _partition_of(key: str, base: str, rels: list[str]) -> str:
    """The partition (table-relative) of a folder Hudi's reader named: the longest partition
    it ends with (Hudi may spell the scheme differently: ``s3a://`` for ``s3://``, ``file:/``
    for ``file:///``), or "" for the table's own folder. A folder that is neither is a typed
    error (the caller then lists storage): never a partition's files filed under another."""
    key = key.rstrip("/")
    rel = max((r for r in rels if r and key.endswith("/" + r)), key=len, default=None)
    if rel is not None:
        return rel
    tail = base.rstrip("/").split("://", 1)[-1].lstrip("/")
    if "" in rels and key.split(":", 1)[-1].lstrip("/").endswith(tail):
        return ""
    raise MetadataTablePresentError(f"Hudi's metadata reader named {key}, which is none of the "
                                    f"{len(rels)} partitions it listed under {base}")


#: a listed file in Java's text of it: Hadoop's FileStatus (0.14: "{path=P; isDirectory=false;
#: length=N;") or Hudi's StoragePathInfo (0.15+: "{path=P, length=N,")
_LISTED = re.compile(r"\{path=(.*?)(?:; isDirectory=(?:true|false); length=|, length=)(\d+)[;,]")


def _commit_json(data: bytes) -> dict:
    """Commit metadata as JSON's dict, from its stored bytes: JSON (version 6) or Avro (8/9)."""
    return json.loads(data) if data[:1] == b"{" else _avro_commit_to_json(data)


def _avro_commit_to_json(data: bytes) -> dict:
    """A layout-2 (Avro) ``HoodieCommitMetadata`` as the JSON Java's POJO reads."""
    import io

    import fastavro

    rec = next(iter(fastavro.reader(io.BytesIO(data))))
    out = {"partitionToWriteStats": {p: [{k: v for k, v in s.items() if v is not None} for s in stats]
                                     for p, stats in (rec.get("partitionToWriteStats") or {}).items()},
           "compacted": bool(rec.get("compacted") or False),
           "extraMetadata": rec.get("extraMetadata") or {}}
    if rec.get("operationType"):
        out["operationType"] = rec["operationType"]
    return out


def _update(storage, config: wc.WriteConfig, props: dict, instant: str, fn, what: str) -> None:
    """Open Hudi's metadata writer for ``instant``, run ``fn(writer)``, close it; Java's refusal
    is a ``metadata_table_present`` error naming ``what`` (the data instant stays uncompleted).
    Only while this thread's table lock is still ours (another writer in the metadata table's
    commit at the same time rolls back the other's pending entry)."""
    check_still_held(storage)
    w = MetadataWriter(storage, config, props, instant)
    try:
        fn(w)
    except Exception as e:  # noqa: BLE001 - Java's refusal
        raise MetadataTablePresentError(f"Hudi's metadata writer refused {what}: {_java_causes(e)}") from None
    finally:
        w.close()


def apply(storage, config: wc.WriteConfig, action: Action, instant: str, data: bytes) -> bool:
    """Apply instant ``instant`` of ours (``action``, its completed bytes) to the table's MDT, if
    it has one; True when applied. Called by the commit path before the instant completes."""
    if action not in (Action.DELTA_COMMIT, Action.COMMIT, Action.COMPACTION, Action.CLEAN, Action.ROLLBACK):
        return False
    props = _props(storage)
    if not present(storage, props):
        return False
    require_writable(storage, props)
    update = {Action.CLEAN: MetadataWriter.clean, Action.ROLLBACK: MetadataWriter.rollback}.get(
        action, MetadataWriter.commit)
    if action is Action.COMPACTION:
        data = _without_listed_logs(storage, data)
    _update(storage, config, props, instant, lambda w: update(w, data), f"{action.value} {instant}")
    return True


def _without_listed_logs(storage, data: bytes) -> bytes:
    """A compaction commit of ours as its metadata-table update: without the write stats of the
    logs in slice C that the metadata table already lists (the copies a schedule
    registered before its plan was visible, :func:`register_files`), as JSON commit metadata.

    Listed twice, a file outlives its delete: Hudi merges a file group's log records first, where
    a later delete cancels an earlier add and leaves nothing, and only then the base file's
    record, whose add survives. On 1.x the metadata table compacts itself while our plan is
    pending, so the schedule's add lands in its base file and the commit's in a log; a Java clean
    of slice C then left the copies listed, gone from storage (1.2 slow loop seed 132). A log the
    metadata table does not list (one execute made, or a table whose metadata table was built
    after the schedule) keeps its stat."""
    meta = _commit_json(data)
    p2s = meta.get("partitionToWriteStats") or {}

    def log_name(stat) -> str | None:
        name = posixpath.basename(str(stat.get("path") or ""))
        return name if parse_log_file_name(name) is not None else None

    parts = sorted({p for p, stats in p2s.items() if any(log_name(s) for s in stats)})
    if not parts:
        return data
    listed = listing(storage, parts)
    kept = {p: [s for s in stats if log_name(s) not in listed.get(p, {})] for p, stats in p2s.items()}
    if kept == p2s:
        return data
    return json.dumps({**meta, "partitionToWriteStats": kept}).encode("utf-8")


def register_files(storage, config: wc.WriteConfig, files: list[tuple[str, str, str]], *, schema: str | None,
                   zone, what: str) -> str | None:
    """Make files of ours that no commit wrote (a plan's re-exposed logs in slice C, before the
    plan is visible) known to the metadata table: an empty data deltacommit D, completed, whose
    MDT deltacommit lists them with their sizes (shared/metadata-table.md §4.2: D is a valid
    instant for every reader line, and its data commit has no write stats, so incremental
    readers see nothing). ``files``: (table-relative path, partition, file id). Zero-byte files
    (the exact-split placeholder) are never registered. Call it under the table's lock; D, or
    None when the table has no metadata table."""
    from ..timeline import layout
    from ..timeline.active import State, Timeline
    from ..timeline.commits import CommitMetadata, WriteStat

    props = _props(storage)
    if not present(storage, props):
        return None
    require_writable(storage, props)
    stats: dict[str, list[WriteStat]] = {}
    for rel, part, fid in files:
        size = storage.size(rel)
        if size <= 0:
            continue
        stats.setdefault(part, []).append(WriteStat(
            fileId=fid, path=rel, prevCommit="null", partitionPath=part, numWrites=0, numDeletes=0,
            numUpdateWrites=0, numInserts=0, totalWriteBytes=size, totalWriteErrors=0, fileSizeInBytes=size))
    if not stats:
        return None
    tl = Timeline.load(storage)
    d = layout.new_time(tl, zone=zone)
    extra = {"schema": schema} if schema else {}
    empty = CommitMetadata(partitionToWriteStats={}, compacted=False, extraMetadata=extra, operationType="UPSERT")
    listed = CommitMetadata(partitionToWriteStats={p: tuple(v) for p, v in stats.items()}, compacted=False,
                            extraMetadata=extra, operationType="UPSERT")
    req = layout.instant(tl, d, Action.DELTA_COMMIT, State.REQUESTED)
    storage.create_if_absent(req.path(), b"")
    storage.create_if_absent(req.path(State.INFLIGHT), layout.commit_data(tl, empty))
    _update(storage, config, props, d, lambda w: w.commit(json.dumps(listed.to_json()).encode("utf-8")),
            f"the files of {what} (at {d})")
    layout.complete(storage, tl, d, Action.DELTA_COMMIT, layout.commit_data(tl, empty), zone=zone)
    return d


def delete_files(storage, config: wc.WriteConfig, rels, delete, *, zone, what: str):
    """Delete files the metadata table may list that no clean, rollback or compaction of Hudi's
    removes (a withdrawn plan's copies in slice C): ``delete()`` deletes them and answers what it
    removed. On a table with a metadata table this happens inside a clean instant E, as Java's
    cleaner would (shared/metadata-table.md §4.2, "unschedule"): E requested and inflight
    listing the files, ``delete()``, the MDT told of E's clean metadata, E completed. A file the
    MDT never listed is ignored there (Hudi's spurious-delete rule). Call it under the table's
    lock; answers ``delete()``'s answer."""
    from ..timeline import avro_models as am
    from ..timeline import layout
    from ..timeline.active import State, Timeline

    rels = list(rels)
    props = _props(storage) if rels else {}
    if not rels or not present(storage, props):
        return delete()
    require_writable(storage, props)
    tl = Timeline.load(storage)
    e = layout.new_time(tl, zone=zone)
    by_part: dict[str, list[str]] = {}
    for rel in rels:
        by_part.setdefault(rel.rsplit("/", 1)[0] if "/" in rel else "", []).append(rel)
    plan = am.cleaner_plan(None, "KEEP_LATEST_COMMITS",
                           {p: [storage.uri(f) for f in fs] for p, fs in by_part.items()},
                           extra_metadata={"hoodieEtc.removes": what})
    data = am.write_avro_metadata(am.CLEANER_PLAN, plan)
    req = layout.instant(tl, e, Action.CLEAN, State.REQUESTED)
    storage.create_if_absent(req.path(), data)
    storage.create_if_absent(req.path(State.INFLIGHT), data)
    out = delete()
    removed = set(out[0] if isinstance(out, tuple) else out)
    parts = {p: am.clean_partition_metadata(p, "KEEP_LATEST_COMMITS",
                                            [storage.uri(f) for f in fs if f in removed], [],
                                            [f.rsplit("/", 1)[-1] for f in fs])
             for p, fs in by_part.items()}
    meta = am.clean_metadata(e, None, parts, 0, extra_metadata={"hoodieEtc.removes": what}, policy="KEEP_LATEST_COMMITS")
    cdata = am.write_avro_metadata(am.CLEAN_METADATA, meta)
    _update(storage, config, props, e, lambda w: w.clean(cdata), f"the removal of {what} (clean {e})")
    layout.complete(storage, tl, e, Action.CLEAN, cdata, zone=zone)
    return out


__all__ = ["present", "available", "prepare_avro_classes", "split_partitions", "folder_exists", "require_writable", "apply", "register_files", "delete_files", "listing",
           "MetadataWriter"]
