#include "config/adhoc.hpp"

#include <cstdio>
#include <filesystem>

#include "config/loader.hpp"
#include "util/strings.hpp"

namespace fs = std::filesystem;

namespace gilhost {

bool is_python_script(const std::string& path) { return ends_with(path, ".py") || ends_with(path, ".pyw"); }

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

std::string script_experiment_toml(const std::string& script, const std::vector<std::string>& argv) {
  const fs::path p(script);
  const std::string stem = p.stem().string();
  std::string args;
  for (const auto& a : argv) args += (args.empty() ? "" : ", ") + toml_quote(a);
  return "[experiment]\n"
         "name = " + toml_quote(stem) + "\n"
         "description = " + toml_quote(p.filename().string() + " run as __main__" +
                                       (argv.empty() ? "" : " with " + join(argv, " "))) + "\n"
         "script = " + toml_quote(p.filename().string()) + "\n"
         "\n[[case]]\n"
         "name = " + toml_quote(stem) + "\n"
         "main = true\n" +
         (argv.empty() ? "" : "argv = [" + args + "]\n");
}

Experiment load_script_experiment(const std::string& script, const std::vector<std::string>& argv,
                                  const LoadOptions& options) {
  // The experiment "lives" beside the script, so the script resolves as the file would resolve it.
  const fs::path where = fs::absolute(script).parent_path() / (fs::path(script).filename().string() + " (as an experiment)");
  return load_experiment_text(script_experiment_toml(script, argv), where.string(), options);
}

}  // namespace gilhost
