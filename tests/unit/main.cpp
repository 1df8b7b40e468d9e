// The Catch2 main of gilhost_unit_tests (every tests/unit/*.cpp is one executable).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
