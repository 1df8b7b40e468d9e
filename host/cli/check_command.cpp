// gilhost check: its options, and cmd_check (cli/check) on them.
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/subcommand.hpp"

namespace gilhost {
namespace {

class CheckCommand : public Subcommand {
 public:
  using Subcommand::Subcommand;
  std::vector<std::string> files;
  CommonOptions co;

  int execute() override { return cmd_check(files, co); }
};

}  // namespace

std::unique_ptr<Subcommand> add_check_command(CLI::App& app) {
  auto c = std::make_unique<CheckCommand>(
      app.add_subcommand("check", "Validate experiment files (errors as file:line:column)"));
  CLI::App& check = c->app();
  check.add_option("files", c->files, "Experiment TOML files, or Python scripts (compiled on each build, as run would run them)")->required();
  check.add_option("-p,--python", c->co.pythons, "Check the scripts on these builds (selectors as for run; default: the file's interpreters)");
  check.add_flag("--no-cache", c->co.no_cache, "Probe interpreters again instead of using the cache");
  return c;
}

}  // namespace gilhost
