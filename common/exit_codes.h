// What went wrong (ErrorKind) and the one place that turns it into an exit code (exit_code_of):
// the contract in docs/exit-codes.md. trainvisor exits with the same code for a kind on every
// platform (`trainvisor render` writes each platform's retry rules around these codes), so the
// map takes no platform. No other file names an exit code: code picks a kind; values that are
// not trainvisor's choice (a worker's own exit code, 128+N for a signal) travel as kWorkerFailed
// and kStoppedBySignal with the value carried.
#pragma once

namespace tv {

enum class ErrorKind {
  kFailed,           // 1: the command did not do it (no checkpoint, a query with no answer)
  kUsage,            // 64: unknown option, missing value, no command
  kPreflightFailed,  // 69 (EX_UNAVAILABLE): wrong network, missing GPUs, low bus bandwidth
  kOsError,          // 71 (EX_OSERR): no thread could be started, too few open files
  kCannotCreate,     // 73 (EX_CANTCREAT): the workers succeeded, --export did not
  kNodeFault,        // 74: a GPU of this node failed: replace the node
  kLost,             // 75 (EX_TEMPFAIL): a peer lost, the rendezvous timed out: retry the job
  kConfig,           // 78 (EX_CONFIG): configuration or topology error
  kHang,             // 124: restarts exhausted, the last failure was a hang
  kCannotExecute,    // 126: the command is not executable
  kNotFound,         // 127: the command, script or module is not found
  kWorkerFailed,     // the root-cause worker's own exit code (carried)
  kStoppedBySignal,  // 128 + the signal (carried) that stopped the worker or trainvisor
};
// Every kind, for the table test (tests/unit/common/exit_codes_test.cc) and the docs.
inline constexpr ErrorKind kEveryErrorKind[] = {
    ErrorKind::kFailed,         ErrorKind::kUsage,        ErrorKind::kPreflightFailed,
    ErrorKind::kOsError,        ErrorKind::kCannotCreate, ErrorKind::kNodeFault,
    ErrorKind::kLost,           ErrorKind::kConfig,       ErrorKind::kHang,
    ErrorKind::kCannotExecute,  ErrorKind::kNotFound,     ErrorKind::kWorkerFailed,
    ErrorKind::kStoppedBySignal};

// The exit code of a kind; `carried` is the worker's code (kWorkerFailed) or the signal
// (kStoppedBySignal), ignored otherwise. A switch without default: a kind added without a code
// does not compile (-Werror=switch).
constexpr int exit_code_of(ErrorKind kind, int carried = 0) {
  switch (kind) {
    case ErrorKind::kFailed:
      return 1;
    case ErrorKind::kUsage:
      return 64;
    case ErrorKind::kPreflightFailed:
      return 69;
    case ErrorKind::kOsError:
      return 71;
    case ErrorKind::kCannotCreate:
      return 73;
    case ErrorKind::kNodeFault:
      return 74;
    case ErrorKind::kLost:
      return 75;
    case ErrorKind::kConfig:
      return 78;
    case ErrorKind::kHang:
      return 124;
    case ErrorKind::kCannotExecute:
      return 126;
    case ErrorKind::kNotFound:
      return 127;
    case ErrorKind::kWorkerFailed:
      return carried;
    case ErrorKind::kStoppedBySignal:
      return 128 + carried;
  }
  return 1;
}

// The kind of a code that arrives as a number (another node's failure over the wire, a child's
// exit): trainvisor's own codes are their kinds again, anything else a worker's.
constexpr ErrorKind kind_of_exit_code(int code) {
  for (ErrorKind k : kEveryErrorKind)
    if (k != ErrorKind::kWorkerFailed && k != ErrorKind::kStoppedBySignal &&
        exit_code_of(k) == code)
      return k;
  return code > 128 ? ErrorKind::kStoppedBySignal : ErrorKind::kWorkerFailed;
}

}  // namespace tv

// Success is no error: the one code with no kind.
namespace tv::exit_code {
inline constexpr int kOk = 0;
}  // namespace tv::exit_code
