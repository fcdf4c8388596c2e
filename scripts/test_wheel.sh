#!/usr/bin/env bash
# Build the wheel, install it in a fresh virtual environment and run the pytest
# suite against the installed package, from outside the source tree.
#
#     bash scripts/test_wheel.sh
#
# The venv gets the wheel, numpy, pytest and hypothesis, not torch (too big):
# the differential tests skip, as with NPGRAD_NO_TORCH=1 in scripts/test.sh.
# The tests run from a temporary copy of the files they read (tests_py/,
# examples/, benchmarks/, pyproject.toml) with no python/ directory, so
# `import npgrad` can only find the installed wheel; the script checks that.
# The build is a full Release build of the C++ core (several minutes on two
# cores); its CMake tree stays in build/<wheel tag> for the next run.
# Arguments are passed to pytest (e.g. -x, -k expr, --ignore=tests_py/x.py).
#   NPGRAD_WHEEL_TESTS="tests_py/a.py tests_py/b.py"  run only these (default: tests_py)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
python=${PYTHON:-python3}
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
source scripts/ccache.sh
# The crash fuzzer (tests_py/test_crash_fuzzer.py) has its full run in
# scripts/test.sh; here (once per Python version) a smaller one, another seed.
export NPGRAD_FUZZ_SEEDS=${NPGRAD_FUZZ_SEEDS:-5}
export NPGRAD_FUZZ_CALLS_PER_TARGET=${NPGRAD_FUZZ_CALLS_PER_TARGET:-5}
export NPGRAD_FUZZ_GRAPHS=${NPGRAD_FUZZ_GRAPHS:-300}
start=$SECONDS

work=$(mktemp -d "${TMPDIR:-/tmp}/npgrad-wheel.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "== building the wheel"
mkdir -p dist
rm -f dist/npgrad-*.whl
"$python" -m pip wheel . -w dist/ --no-deps
wheel=$(ls dist/npgrad-*.whl)
echo "built $wheel at $((SECONDS - start)) s"

echo "== checking its contents"
contents=$("$python" -m zipfile -l "$wheel")
for f in npgrad/__init__.py npgrad/py.typed npgrad/_C/__init__.pyi npgrad/_C/_autograd.pyi \
         npgrad/_C/_functions.pyi npgrad/_tensor_docs.py npgrad/_torch_docs.py; do
  grep -qE "^$f[[:space:]]" <<<"$contents" || { echo "missing from the wheel: $f" >&2; exit 1; }
done
[ "$(grep -cE '^npgrad/_C\.[^/]*\.so[[:space:]]' <<<"$contents")" = 1 ] \
  || { echo "the wheel must hold exactly one npgrad/_C extension module" >&2; exit 1; }

echo "== installing it in a fresh venv"
"$python" -m venv "$work/venv"
venv_python=$work/venv/bin/python
"$venv_python" -m pip install --quiet --upgrade pip
"$venv_python" -m pip install --quiet "$wheel" numpy pytest pytest-xdist hypothesis
echo "installed at $((SECONDS - start)) s"

echo "== running the tests against the installed wheel"
mkdir "$work/src"
cp -r tests_py examples benchmarks pyproject.toml "$work/src/"
cd "$work/src"
unset PYTHONPATH
location=$("$venv_python" -c "import npgrad, sys; print(npgrad.__file__); sys.exit(0)")
case "$location" in
  "$work/venv/"*) echo "npgrad imported from $location" ;;
  *) echo "npgrad was imported from $location, not from the installed wheel" >&2; exit 1 ;;
esac
"$venv_python" -c "import importlib.metadata as m, npgrad; assert m.version('npgrad') == npgrad.__version__"
read -r -a test_paths <<<"${NPGRAD_WHEEL_TESTS:-tests_py}"
"$venv_python" -m pytest "${test_paths[@]}" -q -p no:cacheprovider -W error -n auto "$@"

echo "== test_wheel.sh passed in $((SECONDS - start)) s"
