// Issue 19, the answer first: the HTML page with the answer first, and honest comparisons with the articles.
#include <catch2/catch.hpp>
