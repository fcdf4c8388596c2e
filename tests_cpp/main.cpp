// Catch2 main: tensor storage is a NumPy array, so the interpreter is
// embedded once for the whole run and the GIL stays with this thread.
#define CATCH_CONFIG_RUNNER
#include <pybind11/embed.h>
#include <catch2/catch.hpp>

#include "npgrad/kernels/kernels.h"

int main(int argc, char* argv[]) {
  pybind11::scoped_interpreter interpreter;
  npgrad::kernels::init();
  return Catch::Session().run(argc, argv);
}
