#pragma once
// The bodies of gilhost's subcommands other than run (run/session): each takes what the command line
// said and returns the exit code. main.cpp is only the CLI11 wiring around them.
#include <string>
#include <vector>

#include "build/request.hpp"
#include "discover/common_options.hpp"
#include "report/compare.hpp"
#include "report/merge.hpp"

namespace gilhost {

// gilhost pythons: the builds found, as a table or JSON; with -p, what the selectors pick.
int cmd_pythons(const CommonOptions& o, bool as_json);

// gilhost check: loads each file and every profile of it, then checks its scripts on each selected build
// (cli/python_check); 2 when one has errors.
int cmd_check(const std::vector<std::string>& files, const CommonOptions& co);

// ---- report, compare, merge, export: results files in, documents out ----

struct ReportOptionsCli {
  std::vector<std::string> files;
  std::string format = "text";  // text, md, html, json, csv, trace
  std::string output;           // "" = stdout
  std::string baseline_python;
  bool no_details = false;
  bool wide = false;  // tables unabridged, whatever the terminal's width
  int session = 0;  // --session N: 1 the first of the file's sessions, -1 the last; 0 all
};

struct CompareOptionsCli {
  std::string a, b;
  CompareOptions options;
  std::string format = "text";  // text, md, json
  std::string output;
  bool fail_on_change = false;
  bool wide = false;  // the text unabridged, whatever the terminal's width
  int session = 0;  // --session N, of each file
};

int cmd_report(const ReportOptionsCli& o);  // gilhost report and gilhost export
int cmd_compare(const CompareOptionsCli& o);
int cmd_merge(const std::string& out, const std::vector<std::string>& inputs, const MergeOptions& mo, bool force);

// ---- build: CPython into gilhost's data folder (also --list, --remove) ----

int cmd_build(const BuildCommand& bc);

}  // namespace gilhost
