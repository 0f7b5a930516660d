// Exit codes of trainvisor's commands (the contract in docs/exit-codes.md).
#pragma once

namespace tv::exit_code {
inline constexpr int kOk = 0;
inline constexpr int kNone = 1;    // `checkpoint latest`: no complete checkpoint
inline constexpr int kHang = 124;  // restarts exhausted, last failure was a hang
inline constexpr int kNotExecutable = 126;
inline constexpr int kNotFound = 127;
inline constexpr int kSignalBase = 128;  // 128 + N for a worker killed by signal N
inline constexpr int kUsage = 64;
inline constexpr int kPreflightFailed = 69;
inline constexpr int kTempFail = 75;   // peer lost / rendezvous timed out: retry the job
inline constexpr int kNodeFault = 74;  // a GPU of this node failed (Xid, lost): replace the node
inline constexpr int kOsError = 71;    // EX_OSERR: no thread could be started (pids limit)
inline constexpr int kConfig = 78;     // configuration or topology error
inline constexpr int kExportFailed = 73;  // EX_CANTCREAT: the workers succeeded, --export did not
}  // namespace tv::exit_code
