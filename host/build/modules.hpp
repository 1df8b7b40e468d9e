#pragma once
// CPython's make output names the optional modules it could not build; this reads those lists and says
// which Debian -dev packages usually provide what they need.
#include <string>
#include <vector>

namespace gilhost {

struct ModuleProblems {
  std::vector<std::string> missing;  // "The necessary bits to build these optional modules were not found:"
  std::vector<std::string> removed;  // "... built successfully but were removed because they could not be imported:"
  std::vector<std::string> failed;   // "Failed to build these modules:" (3.10 and older)
  bool empty() const { return missing.empty() && removed.empty() && failed.empty(); }
};

ModuleProblems parse_module_problems(const std::string& make_output);
// The Debian package that usually provides what `module` needs ("_ssl" -> "libssl-dev"), or "".
std::string debian_package_for(const std::string& module);
// Lines for the user: each list of modules, then the apt-get line for the packages known to help.
std::vector<std::string> describe_module_problems(const ModuleProblems& problems);

}  // namespace gilhost
