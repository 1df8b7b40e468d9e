#pragma once
// Signals held back for a scope: delivered, if any came, when it ends (the mask as it was restored).
#include <signal.h>

#include <initializer_list>

namespace gilhost {

class DeferredSignals {
 public:
  explicit DeferredSignals(std::initializer_list<int> signals);
  ~DeferredSignals();
  DeferredSignals(const DeferredSignals&) = delete;
  DeferredSignals& operator=(const DeferredSignals&) = delete;

 private:
  sigset_t saved_{};
};

}  // namespace gilhost
