// gilhost pythons: its options, and cmd_pythons (cli/pythons) on them.
#include "cli/commands.hpp"
#include "cli/subcommand.hpp"

namespace gilhost {
namespace {

class PythonsCommand : public Subcommand {
 public:
  using Subcommand::Subcommand;
  CommonOptions co;
  bool as_json = false;

  int execute() override { return cmd_pythons(co, as_json); }
};

}  // namespace

std::unique_ptr<Subcommand> add_pythons_command(CLI::App& app) {
  auto c = std::make_unique<PythonsCommand>(
      app.add_subcommand("pythons", "List the Python builds found (PATH, pyenv, uv, gilhost build, $GILHOST_PYTHONS)"));
  CLI::App& pythons = c->app();
  pythons.add_option("-p,--python", c->co.pythons, "Also probe this path, and show what these selectors pick");
  pythons.add_flag("--json", c->as_json, "Print JSON");
  pythons.add_flag("--no-cache", c->co.no_cache, "Probe again instead of using the cache");
  return c;
}

}  // namespace gilhost
