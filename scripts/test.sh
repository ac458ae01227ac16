#!/usr/bin/env bash
# Run the test suite (README command 2). Extra arguments go to pytest, e.g. -m slow, -m java.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
# real Java Hudi for the tests marked `java` (bundles + pyspark venvs in $HUDI_ETC_JAVA_CACHE,
# default ./.java-hudi); once installed, a missing line fails those tests instead of skipping them
bash scripts/java_hudi.sh
export HUDI_ETC_JAVA_REQUIRED=1
export PATH="$PWD/.venv/bin:$PATH" SPARK_LOCAL_IP=127.0.0.1 PYSPARK_PYTHON="$PWD/.venv/bin/python"
exec .venv/bin/python -m pytest -q --durations=40 "$@"
