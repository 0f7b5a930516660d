// The words of `trainvisor run`'s enumerated options: each table is its row's only source of words
// (words_of, in cli/run_options.cc's table) and the only way its value is read (choice_of, in
// plan_run and cli/run_command.cc), so the words, the row and the code cannot drift apart.
#pragma once

#include <optional>

#include "checkpoint/resume.h"
#include "common/log.h"
#include "common/options.h"
#include "health/preflight.h"
#include "launcher/job/restart_policy.h"
#include "launcher/workers/standby.h"

namespace tv {

enum class GpuHealthMode { kAuto, kOn, kOff };
inline constexpr Choice<RetryMode> kRetryPolicyWords[] = {{"smart", RetryMode::kSmart},
                                                          {"always", RetryMode::kAlways}};
inline constexpr Choice<bool> kHangStacksWords[] = {{"on", true}, {"off", false}};
inline constexpr Choice<bool> kNodeFingerprintWords[] = {{"check", true}, {"off", false}};
inline constexpr Choice<GpuHealthMode> kGpuHealthWords[] = {
    {"auto", GpuHealthMode::kAuto}, {"on", GpuHealthMode::kOn}, {"off", GpuHealthMode::kOff}};
inline constexpr Choice<LogFormat> kLogFormatWords[] = {{"text", LogFormat::kText},
                                                        {"json", LogFormat::kJson}};
inline constexpr Choice<PreflightLevel> kPreflightWords[] = {{"auto", PreflightLevel::kAuto},
                                                             {"none", PreflightLevel::kNone},
                                                             {"basic", PreflightLevel::kBasic},
                                                             {"full", PreflightLevel::kFull}};
// --require-transport (run's and preflight's): health/transport.h says what each accepts.
inline constexpr Choice<TransportRule> kTransportWords[] = {{"auto", TransportRule::kAuto},
                                                            {"efa", TransportRule::kEfa},
                                                            {"net", TransportRule::kNet},
                                                            {"any", TransportRule::kAny}};
// --resume: which checkpoint to resume from, or none (no lookup at all).
inline constexpr Choice<std::optional<Pick>> kResumeWords[] = {
    {"latest", Pick::kLatest}, {"best", Pick::kBest}, {"none", std::nullopt}};
inline constexpr Choice<WarmMode> kWarmStandbyWords[] = {
    {"on", WarmMode::kOn}, {"off", WarmMode::kOff}, {"auto", WarmMode::kAuto}};

}  // namespace tv
