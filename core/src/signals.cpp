#include "stratus/core/signals.hpp"

#include <signal.h>

#include <csignal>
#include <stdexcept>

namespace stratus {

namespace {

using SigAction = struct sigaction;

volatile std::sig_atomic_t g_pending = 0;
int g_depth = 0;  // watches alive (nested: the innermost handlers are installed)

extern "C" void record_signal(int signal) { g_pending = signal; }

struct NamedSignal {
  const char* name;
  int number;
};

constexpr NamedSignal kSignals[] = {{"SIGTERM", SIGTERM}, {"SIGINT", SIGINT}, {"SIGUSR1", SIGUSR1},
                                    {"SIGUSR2", SIGUSR2}, {"SIGHUP", SIGHUP}, {"SIGXCPU", SIGXCPU}};

}  // namespace

const std::vector<std::string>& catchable_signal_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& s : kSignals) out.emplace_back(s.name);
    return out;
  }();
  return names;
}

int signal_number(std::string_view name) {
  for (const auto& s : kSignals)
    if (name == s.name) return s.number;
  return 0;
}

std::string signal_name(int signal) {
  for (const auto& s : kSignals)
    if (signal == s.number) return s.name;
  return "signal " + std::to_string(signal);
}

SignalWatch::SignalWatch(const std::vector<int>& signals) : signals_(signals) {
  if (g_depth++ == 0) g_pending = 0;  // a signal caught by an outer watch stays pending
  for (const int s : signals_) {
    auto* old = new SigAction{};
    SigAction action{};
    action.sa_handler = record_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;  // interrupted system calls (MPI, I/O) resume
    sigaction(s, &action, old);
    previous_.push_back(old);
  }
}

SignalWatch::~SignalWatch() {
  for (std::size_t i = 0; i < signals_.size(); ++i) {
    auto* old = static_cast<SigAction*>(previous_[i]);
    sigaction(signals_[i], old, nullptr);
    delete old;
  }
  --g_depth;
}

std::vector<int> default_checkpoint_signals() { return {SIGTERM, SIGINT, SIGUSR1}; }

int SignalWatch::pending() noexcept { return g_pending; }

bool SignalWatch::active() noexcept { return g_depth > 0; }

}  // namespace stratus
