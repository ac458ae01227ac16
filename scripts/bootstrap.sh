#!/usr/bin/env bash
# Create ./.venv with everything the project needs (idempotent; fast when nothing changed).
# Installs a Java runtime with apt when none is on PATH (Spark needs Java 17+).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v java >/dev/null 2>&1; then
  echo "bootstrap: no java on PATH; installing a JRE with apt" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless \
    || $SUDO apt-get install -y -qq --no-install-recommends default-jre-headless
fi

PY=${PYTHON:-}
if [ -z "$PY" ]; then
  for c in python3.11 python3; do command -v "$c" >/dev/null 2>&1 && { PY=$c; break; }; done
fi
[ -x .venv/bin/python ] || "$PY" -m venv .venv

stamp=".venv/.hudi-etc-installed"
want=$(cat pyproject.toml scripts/bootstrap.sh | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  # cadwyn<8 spares pip a long backtrack (airflow-core pins fastapi<0.137); pyspark and
  # pyspark-client share files: the tested pair, same version (pyproject allows 4.0-4.2)
  echo "bootstrap: installing the project and its dependencies into .venv (about 2 minutes; pip's progress follows)" >&2
  # one line per package collected / the final install (pip's own chatter filtered out)
  if ! .venv/bin/pip install --disable-pip-version-check -e ".[dev]" "cadwyn<8" \
      "pyspark==4.2.0" "pyspark-client==4.2.0" 2>&1 \
      | awk '/^(Collecting|Installing collected|Successfully|ERROR)/ {print; fflush()}' >&2; then
    echo "bootstrap: pip install failed (run it by hand to see the whole output)" >&2
    exit 1
  fi
  echo "bootstrap: done" >&2
  echo "$want" > "$stamp"
fi
