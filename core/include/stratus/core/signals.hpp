// Stop requests from signals (SIGTERM, SIGUSR1, ...): the handler only records which signal
// came; the time loop polls and turns it into one agreed checkpoint-and-stop on every rank.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace stratus {

/// Names accepted in a deck's signal list ("SIGTERM", "SIGINT", "SIGUSR1", "SIGUSR2",
/// "SIGHUP", "SIGXCPU").
const std::vector<std::string>& catchable_signal_names();

/// The signals a run watches unless its deck says otherwise (SIGTERM, SIGINT, SIGUSR1).
std::vector<int> default_checkpoint_signals();

/// The signal number of `name` (one of catchable_signal_names()), or 0.
int signal_number(std::string_view name);

/// "SIGTERM" for SIGTERM, "signal N" for a number without a name here.
std::string signal_name(int signal);

/// Installs handlers for `signals` while alive and restores the previous ones afterwards. The
/// handler is async-signal-safe: it stores the signal number and nothing else, so a second
/// signal during a checkpoint write changes nothing but the stored number. Watches nest (the
/// innermost one's handlers are installed; each restores what it replaced): `stratus run`
/// watches the default signals from its first instruction, before MPI starts, and the deck's
/// list once the deck is read; a signal caught by the outer watch stays pending.
class SignalWatch {
 public:
  explicit SignalWatch(const std::vector<int>& signals);
  ~SignalWatch();
  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;

  /// The last signal received since the watch started (0 if none).
  [[nodiscard]] static int pending() noexcept;
  /// Whether a watch is installed in this process.
  [[nodiscard]] static bool active() noexcept;

 private:
  std::vector<int> signals_;
  std::vector<void*> previous_;  // struct sigaction*, owned
};

}  // namespace stratus
