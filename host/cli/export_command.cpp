// gilhost export: report's JSON and CSV under a name of their own; cmd_report (cli/results) on its options.
#include "cli/commands.hpp"
#include "cli/subcommand.hpp"

namespace gilhost {
namespace {

class ExportCommand : public Subcommand {
 public:
  using Subcommand::Subcommand;
  ReportOptionsCli exp;

  int execute() override { return cmd_report(exp); }
  bool writes_document() const override { return true; }
};

}  // namespace

std::unique_ptr<Subcommand> add_export_command(CLI::App& app) {
  auto c = std::make_unique<ExportCommand>(
      app.add_subcommand("export", "Export results files as JSON (summary cells) or CSV (one row per run)"));
  CLI::App& exporter = c->app();
  ReportOptionsCli& exp = c->exp;
  exp.format = "json";
  exporter.add_option("results", exp.files, "Results files (.jsonl)")->required()->check(CLI::ExistingFile);
  exporter.add_option("-f,--format", exp.format, "json (default) or csv")->check(CLI::IsMember({"json", "csv"}));
  exporter.add_option("-o,--output", exp.output, "Write to this file (atomically) instead of stdout");
  exporter.add_option("--baseline-python", exp.baseline_python, "Also give each cell's ratio to this build");
  exporter.add_option("--session", exp.session, "Only this session of the file (1 the first, -1 the last)")->type_name("N");
  return c;
}

}  // namespace gilhost
