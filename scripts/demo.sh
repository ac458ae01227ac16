#!/usr/bin/env bash
# The demo (README command 1): a sample table with late-arriving events, written with the
# Spark engine through real spark-submit, then its status. Output goes to ./.demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export PATH="$PWD/.venv/bin:$PATH" SPARK_LOCAL_IP=127.0.0.1 PYSPARK_PYTHON="$PWD/.venv/bin/python"
exec .venv/bin/python scripts/demo.py "$@"
