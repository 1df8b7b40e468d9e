// Issue 19, the answer first: one case time, and failures with their cause.
#include <catch2/catch.hpp>
