// gilhost: measure Python's concurrency models across every Python build found.
// The table of subcommands: each one's options and handler are in host/cli/*_command.cpp; main parses the
// command line, runs the one named, and exits with its code.
#include <exception>
#include <iostream>
#include <optional>

#include <CLI/CLI.hpp>

#include "cli/options.hpp"
#include "cli/plain_text.hpp"
#include "cli/subcommand.hpp"
#include "util/gilhost_version.hpp"

using namespace gilhost;

int main(int argc, char** argv) {
  std::set_terminate(on_terminate);
  CLI::App app{"gilhost — measure how Python's concurrency models behave, on every Python build found.\n"
               "Each run is a fresh child process that loads that build's libpython; the host times it from outside."};
  app.name("gilhost");
  app.set_version_flag("--version", GILHOST_VERSION);
  app.require_subcommand(1);

  Subcommands commands;
  commands.push_back(add_run_command(app));
  commands.push_back(add_check_command(app));
  commands.push_back(add_pythons_command(app));
  commands.push_back(add_report_command(app));
  commands.push_back(add_export_command(app));
  commands.push_back(add_compare_command(app));
  commands.push_back(add_merge_command(app));
  commands.push_back(add_build_command(app));

  std::optional<AsciiTerminal> ascii;  // LC_ALL=C: no ✓ or box drawing on the terminal
  if (!locale_is_utf8()) ascii.emplace();
  if (argc == 1) {
    std::cerr << app.help();
    return 2;
  }
  if (argv[1][0] != '-' && !is_known_command(app, argv[1])) return 2;
  const int parsed_argc = split_trailing_args(commands, argc, argv);
  try {
    app.parse(parsed_argc, argv);
  } catch (const CLI::ParseError& e) {
    if (const std::string hint = option_hint(app); !hint.empty()) std::cerr << "gilhost: " << hint << "\n";
    return app.exit(e) == 0 ? 0 : 2;
  }
  for (const auto& command : commands)
    if (command->app().parsed()) {
      if (command->writes_document()) ascii.reset();  // a document on stdout keeps its UTF-8
      return execute_guarded(*command);
    }
  return 0;
}
