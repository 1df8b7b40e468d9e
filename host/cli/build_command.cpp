// gilhost build: its options, and cmd_build (cli/build) on them.
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/subcommand.hpp"

namespace gilhost {
namespace {

class BuildSubcommand : public Subcommand {
 public:
  using Subcommand::Subcommand;
  BuildCommand bc;

  int execute() override { return cmd_build(bc); }
  bool takes_trailing_args() const override { return true; }
  void set_trailing_args(std::vector<std::string> args) override { bc.request.configure_args = std::move(args); }
};

}  // namespace

std::unique_ptr<Subcommand> add_build_command(CLI::App& app) {
  auto c = std::make_unique<BuildSubcommand>(app.add_subcommand(
      "build", "Build CPython (tarball, URL or source tree) into gilhost's data folder; --list, --remove"));
  CLI::App& build = c->app();
  BuildCommand& bc = c->bc;
  build.add_option("source", bc.request.source,
                   "A tarball (.tar.xz, .tar.gz, .tgz, .tar.bz2), its http(s) URL (downloaded into the cache), or a CPython source tree")
      ->type_name("SOURCE");
  build.add_flag("--free-threaded", bc.request.free_threaded, "Configure with --disable-gil (the label ends in t: 3.14.7t)");
  build.add_option("-j,--jobs", bc.request.jobs, "Jobs for make (default: the cores available)")
      ->check(whole_number_at_least(1))->type_name("N");
  build.add_option("--label", bc.request.label, "Name of the build (default: version, t if free-threaded, a suffix for configure arguments)")
      ->type_name("NAME");
  build.add_option("--sha256", bc.request.sha256, "Check the tarball (or download) against this SHA-256")->type_name("HEX");
  build.add_flag("--force", bc.request.force, "Build again even if the same build exists; replace a different one under the label");
  build.add_flag("--list", bc.list, "List the builds made by gilhost build");
  build.add_flag("--json", bc.json, "With --list: print JSON");
  build.add_option("--remove", bc.remove, "Remove the build LABEL")->type_name("LABEL");
  build.footer("Configure arguments go after --, e.g. gilhost build Python-3.14.7.tar.xz --free-threaded -- --with-pydebug\n"
               "Builds go to $XDG_DATA_HOME/gilhost/pythons/LABEL (~/.local/share/gilhost/...), logs to .../gilhost/logs/;\n"
               "gilhost pythons finds them (source \"gilhost build\"). See docs/build.md.");
  return c;
}

}  // namespace gilhost
