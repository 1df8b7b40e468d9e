#include <filesystem>
#include <iostream>
#include <optional>

#include "cli/commands.hpp"
#include "config/adhoc.hpp"
#include "config/loader.hpp"
#include "cli/python_check.hpp"
#include "discover/selector.hpp"
#include "util/strings.hpp"

namespace gilhost {

namespace {

// The builds found, looked for once and only when a file loads (a TOML error needs no Python).
class Builds {
 public:
  explicit Builds(const CommonOptions& co) : co_(co), cache_(ProbeCache::default_path(), !co.no_cache) {}
  ~Builds() { cache_.save(); }
  Builds(const Builds&) = delete;
  Builds& operator=(const Builds&) = delete;

  // What the file (or -p) selects; a -p selector that selects nothing is an error of its own.
  std::vector<Interpreter> for_experiment(const Experiment& ex, std::vector<std::string>& problems) {
    if (!found_) found_ = discover_all(co_, cache_);
    const std::vector<std::string>& selectors = co_.pythons.empty() ? ex.interpreters : co_.pythons;
    Selection sel = select_interpreters(found_->found, selectors, [&](const std::string& path, std::string& reason) {
      return cache_.probe(path, "explicit", reason);
    });
    if (!co_.pythons.empty() && !sel.unmatched.empty()) {
      // -p's discovery skipped builds whose path names another version: list every usable one.
      sel.unmatched = select_interpreters(discover_every(co_, cache_).found, selectors, [&](const std::string& path, std::string& reason) {
                        return cache_.probe(path, "explicit", reason);
                      }).unmatched;
    }
    if (!co_.pythons.empty())
      for (const auto& s : sel.unmatched) problems.push_back(ex.path + ": selector '" + s.selector + "': " + s.reason);
    if (sel.selected.empty()) problems.push_back(ex.path + ": no Python build selected to check the scripts on");
    return sel.selected;
  }

 private:
  const CommonOptions& co_;
  ProbeCache cache_;
  std::optional<Discovery> found_;
};
// A script, as `gilhost run script.py` would run it: compiled on each selected build (-p, or all).
std::vector<std::string> check_script(const std::string& f, Builds& found, std::string& summary) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(f, ec)) return {f + ": no such file"};
  const Experiment ex = load_script_experiment(f, {});
  std::vector<std::string> problems;
  const std::vector<Interpreter> builds = found.for_experiment(ex, problems);
  for (auto& p : check_python_side(ex, builds)) problems.push_back(std::move(p));
  std::vector<std::string> labels;
  for (const auto& b : builds) labels.push_back(b.label);
  summary = f + ": ok — the script compiles on " + join(labels, ", ");
  return problems;
}

// The TOML side (every profile loads), then the Python side on each selected build.
std::vector<std::string> check_file(const std::string& f, Builds& found, std::string& summary) {
  if (is_python_script(f)) return check_script(f, found, summary);
  Experiment ex = load_experiment(f);
  for (const auto& p : ex.profile_names) load_experiment(f, p);
  std::vector<std::string> problems;
  const std::vector<Interpreter> builds = found.for_experiment(ex, problems);
  for (auto& p : check_python_side(ex, builds)) problems.push_back(std::move(p));
  int expects = 0;
  for (const auto& c : ex.cases) expects += static_cast<int>(c.expects.size());
  std::vector<std::string> labels;
  for (const auto& b : builds) labels.push_back(b.label);
  summary = f + ": ok — " + std::to_string(ex.cases.size()) + " cases, " + std::to_string(expects) +
            " expectations" + (ex.profile_names.empty() ? "" : ", profiles: " + join(ex.profile_names, ", ")) +
            "; scripts compile and name their functions on " + join(labels, ", ");
  return problems;
}

}  // namespace

int cmd_check(const std::vector<std::string>& files, const CommonOptions& co) {
  Builds found(co);
  int bad = 0;
  for (const auto& f : files) {
    try {
      std::string summary;
      const std::vector<std::string> problems = check_file(f, found, summary);
      for (const auto& p : problems) std::cerr << p << "\n";
      if (problems.empty()) std::cout << summary << "\n";
      bad += !problems.empty();
    } catch (const ConfigErrors& e) {
      std::cerr << e.what() << "\n";
      ++bad;
    } catch (const std::runtime_error& e) {
      std::cerr << f << ": " << e.what() << "\n";
      ++bad;
    }
  }
  return bad ? 2 : 0;
}

}  // namespace gilhost
