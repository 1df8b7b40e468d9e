#include "util/deferred_signals.hpp"

#include <pthread.h>

namespace gilhost {

DeferredSignals::DeferredSignals(std::initializer_list<int> signals) {
  sigset_t held;
  sigemptyset(&held);
  for (int sig : signals) sigaddset(&held, sig);
  ::pthread_sigmask(SIG_BLOCK, &held, &saved_);
}

DeferredSignals::~DeferredSignals() { ::pthread_sigmask(SIG_SETMASK, &saved_, nullptr); }

}  // namespace gilhost
