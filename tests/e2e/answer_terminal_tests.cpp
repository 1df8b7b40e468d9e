// Issue 19, the answer first: the terminal: progress, output that fits, ad-hoc answers, loose ends, the time budget per cell.
#include <catch2/catch.hpp>
