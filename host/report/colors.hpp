#pragma once
// The colour of a build in the HTML charts, from its label alone, so one build is one colour in every chart
// and a build's twins read as one family: 3.14.7 a blue, 3.14.7t a darker blue, 3.14.7t+gil a lighter one.
#include <string>

namespace gilhost {

// "hsl(H,S%,L%)": the hue from the label's minor version (3.12, 3.14; a hash of the label when it names none),
// the lightness from its variant (GIL, free-threaded "t", free-threaded with the GIL forced "t+gil"); the
// rest of the label (patch level, path, machine tag) nudges the hue so two 3.12 builds still differ.
std::string build_color(const std::string& label);

}  // namespace gilhost
