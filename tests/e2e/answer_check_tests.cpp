// Issue 19, the answer first: gilhost check checks the Python side.
#include <catch2/catch.hpp>
