#include "build/modules.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

#include "util/strings.hpp"

namespace gilhost {

namespace {

bool is_module_name(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
  return true;
}

}  // namespace

ModuleProblems parse_module_problems(const std::string& make_output) {
  ModuleProblems p;
  std::vector<std::string>* current = nullptr;
  std::istringstream in(make_output);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("The necessary bits to build these optional modules were not found") != std::string::npos) {
      current = &p.missing;
    } else if (line.find("but were removed because they could not be imported") != std::string::npos) {
      current = &p.removed;
    } else if (line.find("Failed to build these modules") != std::string::npos) {
      current = &p.failed;
    } else if (current) {
      // The list is names in columns; it ends at a blank line or at the next sentence.
      std::istringstream words(line);
      std::vector<std::string> names;
      std::string w;
      bool all_names = true;
      while (words >> w) {
        all_names = all_names && is_module_name(w);
        names.push_back(w);
      }
      if (names.empty() || !all_names) {
        current = nullptr;
        continue;
      }
      for (const auto& n : names) add_unique(*current, n);
    }
  }
  return p;
}

std::string debian_package_for(const std::string& module) {
  static const std::map<std::string, std::string> packages = {
      {"_ssl", "libssl-dev"},           {"_hashlib", "libssl-dev"},       {"_ctypes", "libffi-dev"},
      {"zlib", "zlib1g-dev"},           {"_bz2", "libbz2-dev"},           {"_lzma", "liblzma-dev"},
      {"_sqlite3", "libsqlite3-dev"},   {"readline", "libreadline-dev"},  {"_curses", "libncurses-dev"},
      {"_curses_panel", "libncurses-dev"}, {"_uuid", "uuid-dev"},         {"_gdbm", "libgdbm-dev"},
      // Debian's _dbm is gdbm's ndbm interface, which the -compat package adds.
      {"_dbm", "libgdbm-compat-dev"},   {"_tkinter", "tk-dev"},           {"_zstd", "libzstd-dev"},
      {"_decimal", "libmpdec-dev"},     {"_crypt", "libcrypt-dev"},       {"nis", "libnsl-dev"},
  };
  auto it = packages.find(module);
  return it == packages.end() ? "" : it->second;
}

std::vector<std::string> describe_module_problems(const ModuleProblems& p) {
  std::vector<std::string> lines;
  std::vector<std::string> packages;
  auto describe = [&](const std::vector<std::string>& modules, const std::string& what) {
    if (modules.empty()) return;
    std::vector<std::string> named;
    for (const auto& m : modules) {
      const std::string pkg = debian_package_for(m);
      named.push_back(pkg.empty() ? m : m + " (" + pkg + ")");
      if (!pkg.empty()) add_unique(packages, pkg);
    }
    lines.push_back(what + ": " + join(named, ", "));
  };
  describe(p.missing, "modules not built, their libraries' headers were not found");
  describe(p.removed, "modules built but removed, they could not be imported");
  describe(p.failed, "modules that failed to build");
  if (!packages.empty())
    lines.push_back("on Debian/Ubuntu: sudo apt-get install " + join(packages, " ") + ", then build again with --force");
  return lines;
}

}  // namespace gilhost
