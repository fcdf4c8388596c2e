#!/usr/bin/env bash
# Runs every test of npgrad on a fresh machine: installs what is needed (Debian's
# catch2, the Python build and test tools, torch 2.13.0 CPU as the oracle),
# checks the Python code with ruff (lint, and formatting: ruff's style changes
# between minor versions, hence the pin), builds and runs the Catch2 suite
# through CTest, installs the package, and runs the pytest suite (differential
# tests against torch included).
#   NPGRAD_NO_TORCH=1   skip installing the torch oracle (differential tests skip)
#   PYTHON=...          the interpreter to use (default: python3)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

# Debian's catch2 (the C++ tests), graphviz (`dot`, for the rendering tests
# of npgrad.utils.viz) and ccache (see scripts/test_wheel.sh).
if [ ! -f /usr/include/catch2/catch.hpp ] || ! command -v dot >/dev/null \
  || ! command -v ccache >/dev/null; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq catch2 graphviz ccache >/dev/null
fi

$PY -m pip install -q --disable-pip-version-check \
  "scikit-build-core>=0.10" "pybind11>=3.0" "numpy>=2.0" cmake ninja pytest pytest-xdist hypothesis \
  mypy graphviz "ruff~=0.17.0" safetensors \
  scikit-learn tqdm matplotlib  # what the training examples (and their tests) import
if [ -z "${NPGRAD_NO_TORCH:-}" ]; then
  # Only this exact spec takes the CPU build that is on disk (see README).
  $PY -m pip install -q --disable-pip-version-check torch==2.13.0
fi

echo "== ruff (lint, format) =="
$PY -m ruff check python tests_py benchmarks examples scripts
$PY -m ruff format --check python tests_py benchmarks examples scripts

echo "== Catch2 (C++ core) =="
cmake -S . -B build/tests -G Ninja -DNPGRAD_BUILD_TESTS=ON -DNPGRAD_WARNINGS_AS_ERRORS=ON \
  -DPython_EXECUTABLE="$(command -v "$PY")" >/dev/null
cmake --build build/tests
(cd build/tests && ctest --output-on-failure)

echo "== pytest (Python API, gradients, differential vs torch) =="
source scripts/ccache.sh
$PY -m pip install -q --disable-pip-version-check --no-build-isolation .
# -n auto: one pytest worker per core (pytest-xdist). The suite is Python-bound
# and single-threaded, so on the two-core CI machine this halves its time.
$PY -m pytest tests_py -q -p no:cacheprovider -p no:benchmark -W error -n auto
