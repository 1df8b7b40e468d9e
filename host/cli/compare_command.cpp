// gilhost compare: its options, and cmd_compare (cli/results) on them.
#include "cli/commands.hpp"
#include "cli/subcommand.hpp"

namespace gilhost {
namespace {

class CompareCommand : public Subcommand {
 public:
  using Subcommand::Subcommand;
  CompareOptionsCli cmp;

  int execute() override { return cmd_compare(cmp); }
  bool writes_document() const override { return cmp.format != "text"; }
};

}  // namespace

std::unique_ptr<Subcommand> add_compare_command(CLI::App& app) {
  auto c = std::make_unique<CompareCommand>(
      app.add_subcommand("compare", "Compare two results files cell by cell: B / A of the wall times"));
  CLI::App& compare = c->app();
  CompareOptionsCli& cmp = c->cmp;
  compare.add_option("a", cmp.a, "Results file A (the reference)")->required()->check(CLI::ExistingFile);
  compare.add_option("b", cmp.b, "Results file B")->required()->check(CLI::ExistingFile);
  compare.add_option("-t,--threshold", cmp.options.threshold_pct,
                     "A cell has changed only when B / A is beyond this many percent (default 10) and p < alpha")
      ->check(CLI::NonNegativeNumber);
  compare.add_option("--by", cmp.options.by, "Match cells by interpreter label (default), python (full version), or minor (3.12, 3.13t)")
      ->check(CLI::IsMember({"label", "python", "minor"}));
  compare.add_option("-f,--format", cmp.format, "text (default), md, json")->check(CLI::IsMember({"text", "md", "json"}));
  compare.add_option("-o,--output", cmp.output, "Write to this file instead of stdout");
  compare.add_option("--alpha", cmp.options.alpha,
                     "Significance level of the Mann-Whitney U test of each cell's wall times (default 0.05): a cell "
                     "has changed only when p is below it and B / A beyond the threshold")
      ->check(CLI::Range(0.0, 1.0));  // 0 and 1 themselves: compare_runs refuses them
  compare.add_option("--session", cmp.session, "Only this session of each file (1 the first, -1 the last)")->type_name("N");
  compare.add_flag("--wide", cmp.wide, "The text unabridged: every column, whatever the terminal's width");
  compare.add_flag("--fail-on-change", cmp.fail_on_change,
                   "Exit with status 1 when a cell changed significantly (p < alpha) beyond the threshold");
  return c;
}

}  // namespace gilhost
