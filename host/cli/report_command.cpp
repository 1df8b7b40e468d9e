// gilhost report: its options, and cmd_report (cli/results) on them.
#include "cli/commands.hpp"
#include "cli/subcommand.hpp"

namespace gilhost {
namespace {

class ReportCommand : public Subcommand {
 public:
  using Subcommand::Subcommand;
  ReportOptionsCli rep;

  int execute() override { return cmd_report(rep); }
  bool writes_document() const override { return rep.format != "text"; }
};

}  // namespace

std::unique_ptr<Subcommand> add_report_command(CLI::App& app) {
  auto c = std::make_unique<ReportCommand>(app.add_subcommand(
      "report", "Render results files: the table, or Markdown, HTML, JSON, CSV or a thread trace"));
  CLI::App& report = c->app();
  ReportOptionsCli& rep = c->rep;
  report.add_option("results", rep.files, "Results files (.jsonl); several are merged (see merge) into one report")
      ->required()->check(CLI::ExistingFile);
  report.add_option("-f,--format", rep.format,
                    "text (default), md, html (one self-contained page), json (summary cells), csv (one row per run), "
                    "trace (the runs' thread timelines as Chrome Trace Event JSON, for Perfetto UI or chrome://tracing)")
      ->check(CLI::IsMember({"text", "md", "html", "json", "csv", "trace"}));
  report.add_option("-o,--output", rep.output, "Write to this file (atomically) instead of stdout");
  report.add_option("--baseline-python", rep.baseline_python, "Add a column 'vs SEL' per cell: wall / wall of this build (3.12, 3.13t, a label), paired by repeat");
  report.add_flag("--no-details", rep.no_details, "Only the grid, not the per-cell details");
  report.add_flag("--wide", rep.wide, "Tables unabridged (by default a terminal's report fits its width)");
  report.add_option("--session", rep.session, "Only this session of a file -o appended several to (1 the first, -1 the last)")
      ->type_name("N");
  return c;
}

}  // namespace gilhost
