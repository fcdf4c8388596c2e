# Sourced by scripts/test.sh and scripts/test_wheel.sh before they build the
# extension: compile through ccache when it is installed. Only
# csrc/npgrad/kernels sees Python's headers, so the rest of the C++ core
# (tensor, autograd, nodes, ops: most of the compile time) is the same object
# for every CPython; scripts/test_pythons.sh builds it once instead of once per
# version. CMake reads the variable when it first configures a build tree.
if command -v ccache >/dev/null && [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ]; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
