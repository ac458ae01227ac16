#!/usr/bin/env bash
# Real Java Hudi for the tests marked `java` (tests/support/java_hudi.py): the Hudi Spark bundles
# fetched with Maven into $HUDI_ETC_JAVA_CACHE/jars and one pyspark venv per Spark line.
#   table version 6: Hudi 0.14 (hudi-spark3.4-bundle_2.12, pyspark 3.4.4) and 0.15.0 (spark3.5)
#   table version 8: Hudi 1.0.2; table version 9: Hudi 1.1.1 and 1.2.0 (hudi-spark3.5-bundle_2.12, pyspark 3.5.3)
# Idempotent: what is in the cache is not fetched again (a run with everything cached takes well
# under a second). Called by scripts/test.sh; runnable alone. The cache defaults to ./.java-hudi.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=${HUDI_ETC_JAVA_CACHE:-$PWD/.java-hudi}
JARS="$CACHE/jars"
say() { echo "java_hudi: $*" >&2; }
mkdir -p "$JARS"

SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
need_apt() {  # $1 command, $2.. packages
  local cmd=$1; shift
  command -v "$cmd" >/dev/null 2>&1 && return 0
  if ! command -v apt-get >/dev/null 2>&1; then
    say "no '$cmd' on PATH and no apt-get to install it: install $* yourself (the java tests skip without it)"
    exit 1
  fi
  say "no '$cmd' on PATH; installing $* with apt"
  if [ -z "${_APT_UPDATED:-}" ]; then $SUDO apt-get update -qq; _APT_UPDATED=1; fi
  $SUDO apt-get install -y -qq --no-install-recommends "$@"
}
need_apt java openjdk-17-jre-headless
need_apt mvn maven
# the tests compile one judge class against each Hudi bundle (tests/support/java/)
need_apt javac openjdk-17-jdk-headless
# a real ZooKeeper server for the lock tests (tests/support/zookeeper_server.py runs it on 127.0.0.1)
if [ ! -f /usr/share/java/zookeeper.jar ]; then
  if command -v apt-get >/dev/null 2>&1; then
    say "no ZooKeeper server; installing Debian's zookeeper package with apt"
    if [ -z "${_APT_UPDATED:-}" ]; then $SUDO apt-get update -qq; _APT_UPDATED=1; fi
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends zookeeper >&2
  else
    say "no apt-get to install Debian's zookeeper package: the ZooKeeper lock tests will skip"
  fi
fi

# fetch <artifactId> <version>: 0 when $JARS/<a>-<v>.jar is there afterwards
fetch() {
  local a=$1 v=$2 jar="$JARS/$1-$2.jar" log
  [ -s "$jar" ] && return 0
  say "fetching org.apache.hudi:$a:$v with Maven"
  log=$(mktemp)
  if mvn -U -B -q -Dstyle.color=never org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy \
      -Dartifact="org.apache.hudi:$a:$v" -DoutputDirectory="$JARS" >"$log" 2>&1 && [ -s "$jar" ]; then
    rm -f "$log"; say "  $(du -h "$jar" | cut -f1) $jar"; return 0
  fi
  say "  Maven refused org.apache.hudi:$a:$v:"
  grep -m1 -E '\[ERROR\] .' "$log" | sed 's/^/    /' >&2 || tail -3 "$log" >&2
  rm -f "$log"; return 1
}

# Hudi 0.14: 0.14.1 first. Maven Central serves no hudi-spark3.4-bundle_2.12:0.14.1 (nor the
# spark3.3/spark3 bundles, hudi-utilities bundles or hudi-spark_2.12 of 0.14.1); the 0.14.0
# bundle, identical on the code paths the tests exercise (shared/java-coexistence-2.md), stands in.
if [ ! -s "$JARS/hudi-spark3.4-bundle_2.12-0.14.1.jar" ] && [ ! -s "$JARS/hudi-spark3.4-bundle_2.12-0.14.0.jar" ]; then
  fetch hudi-spark3.4-bundle_2.12 0.14.1 || {
    say "  -> falling back to hudi-spark3.4-bundle_2.12:0.14.0 for the 0.14 line"
    fetch hudi-spark3.4-bundle_2.12 0.14.0
  }
fi
fetch hudi-spark3.5-bundle_2.12 0.15.0
fetch hudi-spark3.5-bundle_2.12 1.0.2
fetch hudi-spark3.5-bundle_2.12 1.1.1
fetch hudi-spark3.5-bundle_2.12 1.2.0  # (1.2.1 is refused by the registry here, 2026-11-28)

PY=${PYTHON:-}
if [ -z "$PY" ]; then
  for c in python3.11 python3; do command -v "$c" >/dev/null 2>&1 && { PY=$c; break; }; done
fi
# the judges' drivers also host our own commands (Hudi's metadata writer in their JVM): our core's
# dependencies, as pyproject.toml lists them, go into each venv too
CORE_DEPS=("fastavro>=1.9" "pyarrow>=15" "fsspec>=2024.2" "numpy>=1.26" "msgspec>=0.18")
venv() {  # venv <dir> <pyspark version>
  local d="$CACHE/$1" v=$2
  if [ -x "$d/bin/python" ] && compgen -G "$d/lib/python*/site-packages/pyspark-$v.dist-info" >/dev/null \
     && compgen -G "$d/lib/python*/site-packages/msgspec-*.dist-info" >/dev/null; then
    return 0
  fi
  say "making $d (pyspark==$v and hudi-etc's core dependencies)"
  [ -x "$d/bin/python" ] || "$PY" -m venv "$d"
  "$d/bin/pip" install -q --disable-pip-version-check "pyspark==$v" "${CORE_DEPS[@]}"
}
venv spark3.4 3.4.4
venv spark3.5 3.5.3
say "ready: $CACHE ($(ls "$JARS" | tr '\n' ' '))"
