#!/usr/bin/env bash
# Builds the extension and the Catch2 tests with AddressSanitizer and
# UndefinedBehaviorSanitizer and runs both suites (issue 5). Any finding stops
# the run with a report. Called by .ci/run after scripts/test.sh (which installs
# what this needs).
#
# CPython itself is not built with ASan, so libasan is preloaded into the
# interpreter. Leak detection is off: the interpreter keeps its own objects
# alive until exit by design, which LeakSanitizer reports; npgrad's own leaks
# are covered by the weakref/gc tests of the pytest suite.
# Warnings are not errors here: GCC 12 reports false maybe-uninitialized
# warnings inside libstdc++'s <regex> (used by Catch2) under -fsanitize; the
# plain build in scripts/test.sh keeps -Werror.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
BUILD=build/sanitize

# Set before the build: catch_discover_tests runs the sanitized test binary to
# list its cases, and with leak detection on it reported the interpreter's
# objects (harmless, but an "ERROR: LeakSanitizer" in the CI log).
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:detect_stack_use_after_return=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The crash fuzzer's children inherit the preloaded sanitizers: a finding there
# aborts the child and is reported with its call. A bounded run, its own seed.
export NPGRAD_FUZZ_SEEDS=${NPGRAD_FUZZ_SEEDS:-3}
export NPGRAD_FUZZ_CALLS_PER_TARGET=${NPGRAD_FUZZ_CALLS_PER_TARGET:-8}
export NPGRAD_FUZZ_GRAPHS=${NPGRAD_FUZZ_GRAPHS:-400}

# -O1, as the sanitizers' own documentation advises: the build (about nine
# minutes on two cores) takes about a third less than at -O2, and the run is
# dominated by Python.
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g -DNDEBUG" \
  -DNPGRAD_SANITIZE="address;undefined" -DNPGRAD_BUILD_TESTS=ON \
  -DNPGRAD_WARNINGS_AS_ERRORS=OFF -DPython_EXECUTABLE="$(command -v "$PY")" >/dev/null
cmake --build "$BUILD"

# libstdc++ is preloaded too: the interpreter does not link it, and ASan's
# __cxa_throw interceptor must find it when ASan starts.
PRELOAD="$(${CXX:-c++} -print-file-name=libasan.so) $(${CXX:-c++} -print-file-name=libstdc++.so)"

echo "== Catch2 under ASan+UBSan =="
LD_PRELOAD="$PRELOAD" "$BUILD/npgrad_core_tests"

echo "== pytest under ASan+UBSan =="
# The package from the source tree with the sanitized extension.
PKG="$BUILD/pkg"
rm -rf "$PKG" && mkdir -p "$PKG"
cp -r python/npgrad "$PKG/"
rm -f "$PKG"/npgrad/_C*.so
cp "$BUILD"/_C*.so "$PKG/npgrad/"
# torch is not built with ASan: the differential tests are skipped here (they
# run in the plain suite); every other test runs.
LD_PRELOAD="$PRELOAD" PYTHONPATH="$PKG" NPGRAD_TESTS_WITHOUT_TORCH=1 \
  "$PY" -m pytest tests_py -q -p no:cacheprovider -p no:benchmark -W error \
  -n auto -x "$@"
