#pragma once
// How far `make` has got: object files compiled against the object files the configured Makefile names.
#include <cstddef>
#include <set>
#include <string>

namespace gilhost {

// The distinct *.o words of a configured Makefile: about the number of compilations `make` will run.
std::size_t count_object_targets(const std::string& makefile);
// The object file a compiler line of make's output makes ("gcc ... -c Objects/abstract.c -o
// Objects/abstract.o" -> "Objects/abstract.o"), or "" for any other line.
std::string compiled_object(const std::string& line);

class CompileProgress {
 public:
  explicit CompileProgress(std::size_t expected) : expected_(expected) {}
  void feed(const std::string& line);
  std::size_t done() const { return done_.size(); }
  // "42% (123/290)"; never 100% before make ends, since the estimate can fall short. "" before the first.
  std::string status() const;

 private:
  std::size_t expected_;
  std::set<std::string> done_;
};

}  // namespace gilhost
