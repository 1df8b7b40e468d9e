#pragma once
// Where gilhost keeps what it can rebuild: $XDG_CACHE_HOME/gilhost, else ~/.cache/gilhost.
#include <string>

namespace gilhost {

std::string cache_dir();

}  // namespace gilhost
