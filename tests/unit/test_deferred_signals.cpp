// util/deferred_signals: signals held back for a scope, delivered as it ends.
#include <catch2/catch.hpp>

#include <signal.h>

#include "util/deferred_signals.hpp"

namespace {
volatile sig_atomic_t g_delivered = 0;
}

TEST_CASE("DeferredSignals: a signal raised in its scope is delivered when the scope ends", "[signals]") {
  struct sigaction count {}, old {};
  count.sa_handler = [](int) { g_delivered = g_delivered + 1; };
  REQUIRE(::sigaction(SIGUSR1, &count, &old) == 0);
  g_delivered = 0;
  {
    gilhost::DeferredSignals held({SIGUSR1, SIGUSR2});
    ::raise(SIGUSR1);
    CHECK(g_delivered == 0);
  }
  CHECK(g_delivered == 1);
  // The mask as it was: a signal after the scope is delivered at once.
  ::raise(SIGUSR1);
  CHECK(g_delivered == 2);
  ::sigaction(SIGUSR1, &old, nullptr);
}
