// gilhost merge: its options, and cmd_merge (cli/results) on them once every input is a file.
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/subcommand.hpp"

namespace gilhost {
namespace {

class MergeCommand : public Subcommand {
 public:
  using Subcommand::Subcommand;
  std::vector<std::string> args;  // OUT, then the inputs
  MergeOptions opts;
  bool force = false;

  int execute() override {
    for (std::size_t i = 1; i < args.size(); ++i)
      if (!std::filesystem::is_regular_file(args[i])) {
        std::cerr << "gilhost: merge: no such file: " << args[i] << "\n";
        return 2;
      }
    return cmd_merge(args.front(), {args.begin() + 1, args.end()}, opts, force);
  }
};

}  // namespace

std::unique_ptr<Subcommand> add_merge_command(CLI::App& app) {
  auto c = std::make_unique<MergeCommand>(
      app.add_subcommand("merge", "Combine results files (several machines) into one, labels kept distinct"));
  CLI::App& merge = c->app();
  merge.add_option("files", c->args, "OUT then the input files")->required()->expected(2, -1);
  merge.add_option("--tag", c->opts.tag, "Label tags: auto (label@host where two hosts share a label), host, file, none")
      ->check(CLI::IsMember({"auto", "host", "file", "none"}));
  merge.add_flag("--force", c->force, "Replace OUT if it exists");
  return c;
}

}  // namespace gilhost
