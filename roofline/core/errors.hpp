#pragma once

// The error rule: how every part of this tool reports that something went
// wrong, and the two exception types it defines. A way of reporting an error
// that this rule does not name does not belong in the code.
//
// 1. Throw, when the command cannot do what it was asked. main() prints
//    what() as one line, "cuflash-roofline: error: ...", and exits 2
//    (NoDeviceError: 3). what() is one line in the user's terms: the option,
//    file, key path or call, then the problem. Only these types:
//    - std::invalid_argument: a value the caller gave is outside what the
//      function takes (an option, an axis, a kernel name, a plugin, two
//      reports compare cannot set side by side). A caller that knows where
//      the value came from catches it to put that first (`--columns: ...`,
//      `plugin PATH: ...`).
//    - InputError: the contents of a file, or of another program's output,
//      are not what they must be (JSON text, a report, a ceilings file, a GPU
//      table, a historical table, ncu's CSV). what() names the key path or
//      line; the caller that knows the file catches it to put the path first
//      (a parser that is given the file's name puts it first itself).
//    - NoDeviceError: a command that must measure found no CUDA device.
//    - measure::CudaError (kernels/measure/cuda_error.hpp): a CUDA or cuBLAS
//      call failed; it carries the cudaError_t and the call as written.
//      Thrown by CFR_CUDA_CHECK and CFR_CUBLAS_CHECK.
//    - std::runtime_error: anything else the system refused: a file that
//      cannot be read or written, a library that cannot be opened, a child
//      process that failed.
//    A new exception type only where some catch must tell it apart.
//
// 2. Return a cudaError_t, in code that runs per launch: a kernel's launcher
//    and host wrapper (kernels/attention_api.hpp), the reference and the
//    check, the timing loop (time_cold, measure_sm_clock). Their callers need
//    the code (a sticky error loses the device for the rest of the run) and
//    decide what it means; a launcher's own words go to
//    LaunchContext::failure_message. Such a function throws nothing:
//    CFR_CUDA_CHECK_NOEXCEPT(expr) returns a failing call's status from it,
//    and a CudaError of code it calls is caught and its code() returned. A
//    plugin's functions return CFR_OK or CFR_ERROR and a message (a C ABI
//    carries no exception); the loader turns them into this form. A caller
//    that cannot go on without the call turns the status into rule 1 with
//    CFR_CUDA_CHECK(launch(...)).
//
// 3. Give a row a status and a reason, when one configuration of a sweep or
//    a model cannot be measured or modelled but the others can: a row is
//    RowStatus::skipped when it cannot run here (no code for this device, no
//    room in its memory, a shape outside the kernel's range) and
//    RowStatus::failed when it ran and went wrong (a CUDA error, a wrong
//    answer, unusable samples); its reason is one line. A function that
//    decides whether something can go on returns the reason it cannot, as
//    std::optional<std::string> (nullopt: it can), or, when it also computes
//    a value, OrReason<T>; a result that carries more than a value keeps the
//    reason beside its status (BenchResult, ChildResult). The reason ends up
//    in a row's `reason`, a profile's `unavailable`, or the caller's own
//    message. A check that must also run at compile time (the kernel
//    catalog's static_asserts) returns its reason as a constexpr value,
//    DescriptionError (roofline/model/kernel_description.hpp: the kernel and
//    a literal problem), which the registry turns into rule 1 at run time.
//    Code that works through rows catches rule 1's exceptions at a
//    row's boundary and turns them into that row's outcome, and throws
//    nothing for one row: the sweep fails the row (kernels/bench/
//    row_stages.hpp, app/measured_sweep.cpp), audit records a Finding, the
//    profile child prints the row's line on stderr and exits 1.
//
// 4. Not errors but results: an audit Finding and a failed or skipped row of
//    a finished report are written to the output and set the exit status
//    (CommandStatus::exit_status = exit_code::verdict, 1); the command
//    itself succeeded.
//
// 5. Warn, one line "WARNING: ..." on stderr, when a command goes on with
//    less than it was asked for (no datasheet to compare with, an external
//    profiler slowing the samples) and its output says so too.
//
// A query whose failure only means there is nothing returns that nothing and
// says so where it is declared (device_count(): no driver is no device; a
// clock probe that read nothing: 0 MHz).
//
// Clean-up that runs while unwinding (a destructor, a reset after a failure)
// reports nothing: it ignores a status with `(void)` and a comment saying why
// the error, if there is one, is already reported.

#include <stdexcept>
#include <string>
#include <variant>

namespace cfr {

// Rule 1: a file's or another program's output's contents are not what they
// must be. what() names the key path ("results[3].timing.samples_ms[2]: ...")
// or the line; the file's path is put first by whoever opened it.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Rule 1: a command that must measure found no CUDA device (exit 3).
class NoDeviceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Rule 3: a value, or one line saying why there is none.
template <typename T>
using OrReason = std::variant<T, std::string>;

}  // namespace cfr
