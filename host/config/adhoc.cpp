#include "config/adhoc.hpp"

#include <cctype>
#include <cstdio>
#include <filesystem>

#include "config/loader.hpp"
#include "util/strings.hpp"

namespace fs = std::filesystem;

namespace gilhost {

bool is_python_script(const std::string& path) { return ends_with(path, ".py") || ends_with(path, ".pyw"); }

bool is_module_name(const std::string& name) {
  if (name.empty() || name.front() == '.' || name.back() == '.') return false;
  bool segment_start = true;
  for (const char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (ch == '.') {
      if (segment_start) return false;  // ".."
      segment_start = true;
      continue;
    }
    const bool letter = std::isalpha(c) || ch == '_' || c >= 0x80;  // non-ASCII: Python's to judge
    if (!letter && !(std::isdigit(c) && !segment_start)) return false;
    segment_start = false;
  }
  return true;
}

std::string toml_quote(const std::string& text) {
  std::string out = "\"";
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

namespace {

// "{x}" -> "{{x}}": what argv's substitution gives back as "{x}".
std::string escape_braces(const std::string& text) {
  std::string out;
  for (const char ch : text) {
    out += ch;
    if (ch == '{' || ch == '}') out += ch;
  }
  return out;
}

// One main-mode case named `name`; `what_runs` is the [experiment] line naming the script or module.
std::string main_experiment_toml(const std::string& name, const std::string& shown_as, const std::string& what_runs,
                                 const std::vector<std::string>& argv) {
  std::string args;
  // Arguments after -- are literal: their braces (in argv and the description) are escaped from the
  // file's {param} substitution.
  for (const auto& a : argv) args += (args.empty() ? "" : ", ") + toml_quote(escape_braces(a));
  return "[experiment]\n"
         "name = " + toml_quote(name) + "\n"
         "description = " + toml_quote(escape_braces(shown_as + " run as __main__" + (argv.empty() ? "" : " with " + join(argv, " ")))) + "\n" +
         what_runs + "\n"
         "\n[[case]]\n"
         "name = " + toml_quote(name) + "\n"
         "main = true\n" +
         (argv.empty() ? "" : "argv = [" + args + "]\n");
}

}  // namespace

std::string script_experiment_toml(const std::string& script, const std::vector<std::string>& argv) {
  const fs::path p(script);
  return main_experiment_toml(p.stem().string(), p.filename().string(), "script = " + toml_quote(p.filename().string()), argv);
}

std::string module_experiment_toml(const std::string& module, const std::vector<std::string>& argv) {
  return main_experiment_toml(module, "-m " + module, "module = " + toml_quote(module), argv);
}

namespace {

// The arguments as TOML can hold them (for the file's text and its description only): bytes that are not
// UTF-8 shown as "\\xff".
std::vector<std::string> shown_arguments(const std::vector<std::string>& argv) {
  std::vector<std::string> out;
  for (const auto& a : argv) out.push_back(is_valid_utf8(a) ? a : escape_controls(a));
  return out;
}

// The arguments themselves, byte for byte, as `python script.py ARGS` takes them: never through TOML
// text, which must be UTF-8 (the runner hands bytes that are not to Python as os.fsdecode does).
Experiment with_arguments(Experiment ex, const std::vector<std::string>& argv) {
  for (auto& c : ex.cases) c.argv = argv;
  return ex;
}

}  // namespace

Experiment load_script_experiment(const std::string& script, const std::vector<std::string>& argv,
                                  const LoadOptions& options) {
  // The experiment "lives" beside the script, so the script resolves as the file would resolve it.
  const fs::path where = fs::absolute(script).parent_path() / (fs::path(script).filename().string() + " (as an experiment)");
  return with_arguments(load_experiment_text(script_experiment_toml(script, shown_arguments(argv)), where.string(), options), argv);
}

std::string own_loop_count_warning(const std::string& module) {
  const std::string top = module.substr(0, module.find('.'));
  if (top != "pyperf" && top != "pyperformance") return "";
  return "-m " + module + " chooses its own loop counts, so its wall time, and the ratios of it, do not track "
         "speed: compare the figure it prints instead (--extract NAME=REGEX, one group around the number)";
}

Experiment load_module_experiment(const std::string& module, const std::vector<std::string>& argv,
                                  const LoadOptions& options) {
  // Like `python -m`, the module is looked for from the working directory.
  const fs::path where = fs::current_path() / ("-m " + module + " (as an experiment)");
  Experiment ex = with_arguments(load_experiment_text(module_experiment_toml(module, shown_arguments(argv)), where.string(), options), argv);
  // A module that picks its own loop count: its own figure per loop is what builds are compared by.
  if (const auto timing = known_timing(module))
    for (auto& c : ex.cases) {
      overlay_extracts(c.extract, {timing->spec});
      c.compare = timing->spec.name;
      c.compare_what = timing->what;
    }
  return ex;
}

}  // namespace gilhost
