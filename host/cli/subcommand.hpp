#pragma once
// One gilhost subcommand on the command line: its CLI11 options, added by its add_*_command (each in its
// own host/cli/*_command.cpp), feed the handler that does the work (cmd_run, cmd_report, ...). main.cpp is
// the table of them.
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace gilhost {

class Subcommand {
 public:
  explicit Subcommand(CLI::App* app) : app_(app) {}
  virtual ~Subcommand() = default;
  Subcommand(const Subcommand&) = delete;
  Subcommand& operator=(const Subcommand&) = delete;

  CLI::App& app() const { return *app_; }
  // The handler, once the command line is parsed into the options: the exit code.
  virtual int execute() = 0;
  // Whether what follows "--" is its own (a script's arguments, configure's): kept from CLI11, which would
  // take them for more files.
  virtual bool takes_trailing_args() const { return false; }
  virtual void set_trailing_args(std::vector<std::string> /*args*/) {}
  // Whether stdout gets a document (report -f html): a file's content, whose UTF-8 stays under LC_ALL=C.
  virtual bool writes_document() const { return false; }

 private:
  CLI::App* app_;
};

using Subcommands = std::vector<std::unique_ptr<Subcommand>>;

// In the order `gilhost --help` lists them.
std::unique_ptr<Subcommand> add_run_command(CLI::App& app);
std::unique_ptr<Subcommand> add_check_command(CLI::App& app);
std::unique_ptr<Subcommand> add_pythons_command(CLI::App& app);
std::unique_ptr<Subcommand> add_report_command(CLI::App& app);
std::unique_ptr<Subcommand> add_export_command(CLI::App& app);
std::unique_ptr<Subcommand> add_compare_command(CLI::App& app);
std::unique_ptr<Subcommand> add_merge_command(CLI::App& app);
std::unique_ptr<Subcommand> add_build_command(CLI::App& app);

// ---- the steps of main ----

// Allocation failure anywhere (a thread, a destructor, a noexcept function included) ends gilhost with a
// message and exit code 2, never an abort on an uncaught std::bad_alloc: for std::set_terminate.
[[noreturn]] void on_terminate();

// False, after saying so with the nearest name, when `word` names no subcommand (CLI11 would say "A
// subcommand is required" of a misspelt one).
bool is_known_command(const CLI::App& app, const std::string& word);

// Hands what follows "--" to the subcommand argv[1] names when it takes it; the argc left for CLI11.
int split_trailing_args(const Subcommands& commands, int argc, char** argv);

// The handler of the parsed subcommand, its exceptions said as "gilhost: ..." with exit code 2.
int execute_guarded(Subcommand& command);

}  // namespace gilhost
