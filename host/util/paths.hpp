#pragma once
// Where gilhost keeps things (XDG base directories).
#include <string>

namespace gilhost {

// What it can rebuild: $XDG_CACHE_HOME/gilhost, else ~/.cache/gilhost.
std::string cache_dir();
// What it made and keeps (gilhost build's Pythons and logs): $XDG_DATA_HOME/gilhost, else
// ~/.local/share/gilhost. A relative $XDG_DATA_HOME is ignored, as the XDG specification says: a
// build's prefix is compiled into it and must not depend on the current folder.
std::string data_dir();
// The builds of `gilhost build`, one folder per label: data_dir()/pythons.
std::string builds_dir();

}  // namespace gilhost
