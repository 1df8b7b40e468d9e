#include "cli/subcommand.hpp"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <new>

#include <unistd.h>

#include "cli/did_you_mean.hpp"
#include "util/strings.hpp"

namespace gilhost {
namespace {

[[noreturn]] void out_of_memory() {
  static const char message[] =
      "gilhost: out of memory (a ulimit, or an experiment too large for this machine: docs/config.md, Limits)\n";
  (void)!::write(2, message, sizeof message - 1);
  std::_Exit(2);
}

}  // namespace

void on_terminate() {
  if (const std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::bad_alloc&) {
      out_of_memory();
    } catch (...) {
    }
  }
  std::abort();
}

bool is_known_command(const CLI::App& app, const std::string& word) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  if (std::find(names.begin(), names.end(), word) != names.end()) return true;
  const std::string near = nearest_word(word, names);
  std::cerr << "gilhost: unknown command '" << word << "'" << (near.empty() ? "" : "; did you mean '" + near + "'?")
            << " (commands: " << join(names, ", ") << ")\n"
            << "Run with --help for more information.\n";
  return false;
}

int split_trailing_args(const Subcommands& commands, int argc, char** argv) {
  if (argc < 2) return argc;
  const auto named = std::find_if(commands.begin(), commands.end(),
                                  [&](const auto& c) { return c->app().get_name() == argv[1]; });
  if (named == commands.end() || !(*named)->takes_trailing_args()) return argc;
  for (int i = 2; i < argc; ++i)
    if (std::string(argv[i]) == "--") {
      (*named)->set_trailing_args({argv + i + 1, argv + argc});
      return i;
    }
  return argc;
}

int execute_guarded(Subcommand& command) {
  try {
    return command.execute();
  } catch (const std::bad_alloc&) {
    out_of_memory();
  } catch (const std::exception& e) {
    std::cerr << "gilhost: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace gilhost
