#pragma once
// Where in an experiment file something is written, for errors a user can find.
#include <string>

namespace gilhost {

struct SourcePos {
  std::string file;
  int line = 0;
  int column = 0;
  // "file:line:column"; just "file" for what concerns the whole file (line 0: unreadable, --case).
  std::string str() const {
    return line <= 0 ? file : file + ":" + std::to_string(line) + ":" + std::to_string(column);
  }
};

}  // namespace gilhost
