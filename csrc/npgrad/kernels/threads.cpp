// GIL and threads: waiting for locks and threads without the GIL, and
// NumPy's floating-point error state.
#include "npgrad/kernels/internal.h"

#include <exception>
#include <string>
#include <system_error>
#include <thread>

#include "npgrad/util/error.h"

namespace npgrad::kernels {

// Note [GIL and shared autograd state]
// The engine runs with the GIL held, so the GIL serialises npgrad's own code.
// But NumPy drops the GIL inside a large ufunc: a second thread's backward
// can then run and reach state the first is in the middle of updating (a
// leaf's .grad). That state has its own mutex; a thread must never block on
// it while holding the GIL, or the owner could wait forever for the GIL.
void lock_releasing_gil(std::mutex& m) {
  if (m.try_lock()) {
    return;
  }
  if (Py_IsInitialized() && PyGILState_Check()) {
    Py_BEGIN_ALLOW_THREADS m.lock();
    Py_END_ALLOW_THREADS
  } else {
    m.lock();
  }
}

void run_on_new_thread(const std::function<void()>& fn) {
  std::exception_ptr error;
  bool python = Py_IsInitialized() && PyGILState_Check();
  auto body = [&] {
    PyGILState_STATE gil{};
    if (python) {
      gil = PyGILState_Ensure();
    }
    try {
      fn();
    } catch (...) {
      error = std::current_exception();
    }
    if (python) {
      PyGILState_Release(gil);
    }
  };
  // A thread that cannot be started (the process is out of threads or
  // memory) is an error of the call, raised with the GIL held again.
  std::string start_failure;
  auto start_and_join = [&] {
    try {
      std::thread(body).join();
    } catch (const std::system_error& e) {
      start_failure = e.what();
    }
  };
  if (python) {
    Py_BEGIN_ALLOW_THREADS start_and_join();
    Py_END_ALLOW_THREADS
  } else {
    start_and_join();
  }
  if (!start_failure.empty()) {
    throw Error("could not start a thread: " + start_failure);
  }
  if (error) {
    std::rethrow_exception(error);
  }
}

namespace {
thread_local int fp_ignore_depth = 0;
}

IgnoreFpErrors::IgnoreFpErrors() {
  if (fp_ignore_depth++ == 0 && initialized_) {
    token_ = PyContextVar_Set(np_.errstate_var, np_.errstate_ignore);
    if (token_ == nullptr) {
      PyErr_Clear();
    }
  }
}

IgnoreFpErrors::~IgnoreFpErrors() {
  --fp_ignore_depth;
  if (token_ != nullptr) {
    PyContextVar_Reset(np_.errstate_var, static_cast<PyObject*>(token_));
    Py_DECREF(static_cast<PyObject*>(token_));
  }
}

}  // namespace npgrad::kernels
