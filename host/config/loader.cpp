#include "config/loader.hpp"

#include <toml++/toml.h>

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "config/adhoc.hpp"
#include "config/limits.hpp"
#include "config/placeholders.hpp"
#include "config/precision.hpp"
#include "config/toml_guard.hpp"
#include "util/fd.hpp"
#include "util/strings.hpp"

namespace fs = std::filesystem;

namespace gilhost {

ConfigErrors::ConfigErrors(std::vector<ConfigError> errors)
    : std::runtime_error([&] {
        std::string all;
        for (const auto& e : errors) all += (all.empty() ? "" : "\n") + e.str();
        return all;
      }()),
      errors_(std::move(errors)) {}

namespace {

nlohmann::json to_json(const toml::node& node) {
  if (auto t = node.as_table()) {
    nlohmann::json j = nlohmann::json::object();
    for (auto&& [k, v] : *t) j[std::string(k.str())] = to_json(v);
    return j;
  }
  if (auto a = node.as_array()) {
    nlohmann::json j = nlohmann::json::array();
    for (auto&& v : *a) j.push_back(to_json(v));
    return j;
  }
  if (auto v = node.as_integer()) return v->get();
  if (auto v = node.as_floating_point()) return v->get();
  if (auto v = node.as_boolean()) return v->get();
  if (auto v = node.as_string()) return v->get();
  std::ostringstream text;  // dates and times: kept as their TOML text
  if (auto v = node.as_date()) text << v->get();
  if (auto v = node.as_time()) text << v->get();
  if (auto v = node.as_date_time()) text << v->get();
  return text.str();
}

class Loader {
 public:
  // `profile_params`: the applied profile's params, which cases read after [params] and their own.
  // `overrides`: --param, which also replaces a sweep over its key.
  Loader(std::string path, std::string profile, nlohmann::json profile_params, nlohmann::json overrides,
         const std::vector<std::string>& extracts)
      : path_(std::move(path)), profile_(std::move(profile)), profile_params_(std::move(profile_params)),
        overrides_(std::move(overrides)) {
    dir_ = fs::absolute(fs::path(path_)).parent_path();
    read_extract_options(extracts);
  }

  Experiment load(const toml::table& root) {
    Experiment ex;
    ex.path = fs::absolute(path_).lexically_normal().string();
    ex.name = fs::path(path_).stem().string();
    check_keys(root, {"experiment", "params", "profile", "case", "view"}, "the top level");

    const toml::table* exp = table_at(root, "experiment");
    if (!exp) {
      error(root.source(), "missing the [experiment] table (it names at least the script)");
    } else {
      read_experiment(*exp, ex);
    }
    if (auto p = table_at(root, "params")) ex.params = to_json(*p);
    ex.file_params = ex.params;

    std::map<std::string, Profile> profiles;
    const Profile* applied = read_profiles(root, ex, profiles);
    const std::set<std::string> base_names = read_cases(root, ex);
    if (ex.cases.empty() && errors_.empty()) error(root.source(), "no [[case]]: an experiment needs at least one");
    read_views(root, ex);  // before a profile drops cases: a view of a dropped case is not a typo
    if (const toml::node* d = root["experiment"]["description"].node())
      ex.description = filled(ex.description, params_used(ex), d->source(), "description");

    keep_profile_cases(applied, base_names, ex);
    check_plan_size(ex);
    if (!ex.baseline.empty()) {
      bool found = false;
      for (const auto& c : ex.cases) found |= (c.name == ex.baseline || c.base_name == ex.baseline);
      if (!found && applied == nullptr) error(baseline_src_, "baseline '" + ex.baseline + "' is not a case name");
    }
    if (!errors_.empty()) throw ConfigErrors(errors_);
    return ex;
  }

 private:
  // Where `src` starts in this file.
  SourcePos pos(const toml::source_region& src) const {
    return SourcePos{path_, static_cast<int>(src.begin.line), static_cast<int>(src.begin.column)};
  }

  void error(const toml::source_region& src, const std::string& message) { error_at(pos(src), message); }

  void error_at(const SourcePos& where, const std::string& message) {
    ConfigError e{where, message};
    // A case's checks run once per sweep expansion: report each problem once.
    for (const auto& seen : errors_)
      if (seen.where.line == e.where.line && seen.where.column == e.where.column && seen.message == e.message) return;
    errors_.push_back(std::move(e));
  }

  void check_keys(const toml::table& t, std::initializer_list<const char*> allowed, const std::string& where) {
    for (auto&& [k, v] : t) {
      bool ok = false;
      for (const char* a : allowed) ok |= (k.str() == a);
      if (!ok) {
        std::vector<std::string> names(allowed.begin(), allowed.end());
        error(k.source(), "unknown key '" + std::string(k.str()) + "' in " + where + " (allowed: " + join(names, ", ") + ")");
      }
    }
  }

  const toml::table* table_at(const toml::table& t, const char* key) {
    const toml::node* n = t.get(key);
    if (!n) return nullptr;
    if (!n->is_table()) {
      error(n->source(), std::string("'") + key + "' must be a table");
      return nullptr;
    }
    return n->as_table();
  }

  std::optional<std::string> get_string(const toml::table& t, const char* key) {
    const toml::node* n = t.get(key);
    if (!n) return std::nullopt;
    if (auto s = n->as_string()) return s->get();
    error(n->source(), std::string("'") + key + "' must be a string");
    return std::nullopt;
  }

  std::optional<std::int64_t> get_int(const toml::table& t, const char* key, std::int64_t min, std::int64_t max) {
    const toml::node* n = t.get(key);
    if (!n) return std::nullopt;
    auto v = n->as_integer();
    if (!v) {
      error(n->source(), std::string("'") + key + "' must be an integer");
      return std::nullopt;
    }
    if (v->get() < min || v->get() > max) {
      error(n->source(), std::string("'") + key + "' must be from " + std::to_string(min) + " to " + std::to_string(max) +
                             (v->get() > max && max >= limits::kMaxRounds ? " (gilhost's limit: docs/config.md, Limits)" : ""));
      return std::nullopt;
    }
    return v->get();
  }

  // cell_budget: seconds, or 0 for none.
  std::optional<double> get_budget(const toml::table& t) {
    const toml::node* n = t.get("cell_budget");
    if (n && n->value<double>() == 0.0) return 0.0;
    return get_seconds(t, "cell_budget");
  }

  // precision: "3%", 0.03, or 0 / "off" (config/precision).
  std::optional<double> get_precision(const toml::table& t) {
    const toml::node* n = t.get("precision");
    if (!n) return std::nullopt;
    std::string text, why;
    if (auto s = n->as_string()) text = s->get();
    else if (auto i = n->as_integer()) text = std::to_string(i->get());
    else if (auto f = n->as_floating_point()) text = fmt::format("{}", f->get());
    else {
      error(n->source(), "'precision' must be a percentage (\"3%\"), a fraction (0.03), or \"off\"");
      return std::nullopt;
    }
    const std::optional<double> v = parse_precision(text, why);
    if (!v) error(n->source(), "precision: " + why);
    return v;
  }

  std::optional<double> get_seconds(const toml::table& t, const char* key) {
    const toml::node* n = t.get(key);
    if (!n) return std::nullopt;
    double value = 0;
    if (auto i = n->as_integer()) value = static_cast<double>(i->get());
    else if (auto f = n->as_floating_point()) value = f->get();
    else {
      error(n->source(), std::string("'") + key + "' must be a number of seconds");
      return std::nullopt;
    }
    if (!(value > 0) || !(value <= limits::kMaxTimeoutS)) {
      error(n->source(), std::string("'") + key + "' must be more than 0 seconds and at most a week (" +
                             std::to_string(static_cast<long>(limits::kMaxTimeoutS)) + ")");
      return std::nullopt;
    }
    return value;
  }

  std::optional<bool> get_bool(const toml::table& t, const char* key) {
    const toml::node* n = t.get(key);
    if (!n) return std::nullopt;
    if (auto b = n->as_boolean()) return b->get();
    error(n->source(), std::string("'") + key + "' must be true or false");
    return std::nullopt;
  }

  std::vector<std::string> get_strings(const toml::table& t, const char* key) {
    std::vector<std::string> out;
    const toml::node* n = t.get(key);
    if (!n) return out;
    const toml::array* a = n->as_array();
    if (!a) {
      error(n->source(), std::string("'") + key + "' must be an array of strings");
      return out;
    }
    for (auto&& item : *a) {
      if (auto s = item.as_string()) out.push_back(s->get());
      else error(item.source(), std::string("'") + key + "' must hold strings only");
    }
    return out;
  }

  std::string script_path(const toml::table& t, const std::string& rel) {
    fs::path p = fs::path(rel).is_absolute() ? fs::path(rel) : dir_ / rel;
    p = p.lexically_normal();
    if (!fs::is_regular_file(p)) error(t.get("script")->source(), "script not found: " + p.string());
    return p.string();
  }

  // `script` or `module` of a table: at most one of them, the module's name checked.
  void read_script_or_module(const toml::table& t, std::string& script, std::string& module) {
    auto s = get_string(t, "script");
    auto m = get_string(t, "module");
    if (s && m) error(t.get("module")->source(), "give either script = \"file.py\" or module = \"name\", not both");
    if (s) script = script_path(t, *s);
    if (m) {
      if (is_module_name(*m)) module = *m;
      else error(t.get("module")->source(), "module = \"" + *m + "\" is not a module name (dotted, as for python -m: \"http.server\")");
    }
  }

  void read_experiment(const toml::table& t, Experiment& ex) {
    check_keys(t, {"name", "description", "script", "module", "interpreters", "repeat", "warmup", "timeout",
                   "cell_budget", "precision", "sample_interval_ms", "thread_states", "baseline", "env", "article", "extract"}, "[experiment]");
    if (auto v = get_string(t, "name")) {
      // The name is part of the results file's path: it must not lead out of results/.
      if (v->empty() || v->find('/') != std::string::npos || v->find("..") != std::string::npos ||
          v->find('\0') != std::string::npos)
        error(t.get("name")->source(), "name = \"" + *v + "\" cannot name a results file: no '/', no '..', not empty");
      else
        ex.name = *v;
    }
    if (auto v = get_string(t, "description")) ex.description = *v;
    read_script_or_module(t, ex.script, ex.module);
    if (t.get("interpreters")) {
      ex.interpreters = get_strings(t, "interpreters");
      if (ex.interpreters.empty()) error(t.get("interpreters")->source(), "'interpreters' is empty: write [\"all\"] for every build found");
    }
    if (auto v = get_int(t, "repeat", 1, limits::kMaxRounds)) ex.repeat = static_cast<int>(*v);
    if (auto v = get_int(t, "warmup", 0, limits::kMaxRounds)) ex.warmup = static_cast<int>(*v);
    rounds_src_ = t.get("repeat") ? t.get("repeat")->source() : t.source();
    ex.repeat_written = t.get("repeat") != nullptr;
    if (auto v = get_precision(t)) ex.precision = *v;
    if (auto v = get_seconds(t, "timeout")) ex.timeout_s = *v;
    if (auto v = get_budget(t)) ex.cell_budget_s = *v;
    if (auto v = get_int(t, "sample_interval_ms", 1, limits::kMaxSampleIntervalMs)) ex.sample_interval_ms = static_cast<int>(*v);
    if (auto v = get_bool(t, "thread_states")) ex.thread_states = *v;
    if (auto v = get_string(t, "baseline")) {
      ex.baseline = *v;
      baseline_src_ = t.get("baseline")->source();
    }
    if (auto env = table_at(t, "env")) {
      for (auto&& [k, v] : *env) {
        if (auto s = v.as_string()) ex.env[std::string(k.str())] = s->get();
        else error(v.source(), "env values must be strings");
      }
    }
    if (auto article = table_at(t, "article")) ex.article = to_json(*article);
    if (auto extract = table_at(t, "extract")) experiment_extract_ = read_extract(*extract, "experiment.extract");
  }

  // name = "regex" entries, each regex compiled and checked where it is written.
  std::vector<ExtractSpec> read_extract(const toml::table& t, const std::string& where) {
    std::vector<ExtractSpec> out;
    // toml++ keeps a table's keys sorted: walk them in file order, so errors come in the order written.
    std::vector<std::pair<const toml::key*, const toml::node*>> entries;
    for (auto&& [k, v] : t) entries.emplace_back(&k, &v);
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
      const auto &x = a.first->source().begin, &y = b.first->source().begin;
      return x.line != y.line ? x.line < y.line : x.column < y.column;
    });
    for (const auto& [key, node] : entries) {
      const toml::key& k = *key;
      const toml::node& v = *node;
      const std::string name(k.str());
      if (name.empty()) {
        error(k.source(), where + ": a metric needs a name");
        continue;
      }
      const auto s = v.as_string();
      if (!s) {
        error(v.source(), where + "." + name + " must be a string: a regex with one group around the number, "
                          "e.g. '^" + name + "\\s+([0-9.]+)'");
        continue;
      }
      std::string problem;
      auto re = compile_extract_regex(s->get(), problem);
      if (!re) {
        error(v.source(), where + "." + name + ": " + problem);
        continue;
      }
      out.push_back({name, s->get(), std::move(re),
                     pos(v.source())});
    }
    return out;
  }

  void read_extract_options(const std::vector<std::string>& extracts) {
    for (const auto& arg : extracts) {
      const SourcePos where{"--extract " + arg, 0, 0};
      try {
        auto [name, pattern] = parse_extract_option(arg);
        std::string problem;
        if (auto re = compile_extract_regex(pattern, problem)) extract_options_.push_back({name, pattern, std::move(re), where});
        else error_at(where, problem);
      } catch (const std::invalid_argument& e) {
        error_at(where, e.what());
      }
    }
  }

  Profile read_profile(const std::string& name, const toml::table& t) {
    check_keys(t, {"repeat", "warmup", "timeout", "precision", "params", "cases"}, "a [profile.*] table");
    Profile p;
    if (auto v = get_int(t, "repeat", 1, limits::kMaxRounds)) p.repeat = static_cast<int>(*v);
    if (auto v = get_int(t, "warmup", 0, limits::kMaxRounds)) p.warmup = static_cast<int>(*v);
    p.timeout_s = get_seconds(t, "timeout");
    p.precision = get_precision(t);
    if (auto params = table_at(t, "params")) p.params = to_json(*params);
    p.cases = get_strings(t, "cases");
    auto& sources = profile_case_src_[name];
    if (auto arr = t.get_as<toml::array>("cases"))
      for (auto&& item : *arr)
        if (auto s = item.as_string()) sources.emplace_back(s->get(), item.source());
    return p;
  }

  CaseRequirement read_requirement(const toml::table& t) {
    check_keys(t, {"python", "because"}, "a case's requires");
    CaseRequirement r;
    if (auto v = get_string(t, "python")) {
      try {
        r.python = VersionSpec::parse(*v);
      } catch (const std::invalid_argument& err) {
        error(t.get("python")->source(), err.what());
      }
    }
    if (auto v = get_string(t, "because")) r.because = *v;
    return r;
  }

  Expectation read_expect(const toml::table& t) {
    check_keys(t, {"python", "free_threaded", "gil", "key", "result", "result_ne", "result_lt", "result_le", "result_gt",
                   "result_ge", "status", "exit_code", "error", "stdout", "stderr", "note"}, "[[case.expect]]");
    Expectation e;
    e.where = pos(t.source());
    if (auto v = get_string(t, "python")) {
      try {
        e.python = VersionSpec::parse(*v);
      } catch (const std::invalid_argument& err) {
        error(t.get("python")->source(), err.what());
      }
    }
    e.free_threaded = get_bool(t, "free_threaded");
    e.gil = get_bool(t, "gil");
    if (auto v = get_string(t, "key")) e.key = *v;
    static const std::pair<const char*, CompareOp> kChecks[] = {
        {"result", CompareOp::eq},    {"result_ne", CompareOp::ne}, {"result_lt", CompareOp::lt},
        {"result_le", CompareOp::le}, {"result_gt", CompareOp::gt}, {"result_ge", CompareOp::ge}};
    for (const auto& [key, op] : kChecks) {
      const toml::node* n = t.get(key);
      if (!n) continue;
      nlohmann::json value = to_json(*n);
      if (is_ordering(op) && !value.is_number())
        error(n->source(), std::string("'") + key + "' compares numbers: give a number");
      e.result_checks.emplace_back(op, value);
    }
    if (auto v = get_string(t, "status")) {
      if (*v != "ok" && *v != "error" && *v != "timeout" && *v != "crashed")
        error(t.get("status")->source(), "status must be one of ok, error, timeout, crashed");
      e.status = *v;
    }
    if (auto v = get_int(t, "exit_code", -255, 255)) e.exit_code = static_cast<int>(*v);
    e.error = get_string(t, "error");
    e.stdout_contains = get_string(t, "stdout");
    e.stderr_contains = get_string(t, "stderr");
    if (auto v = get_string(t, "note")) e.note = *v;
    if (e.result_checks.empty() && !e.status && !e.exit_code && !e.error && !e.stdout_contains && !e.stderr_contains)
      error(t.source(), "this expectation checks nothing: add result, status, error, exit_code, stdout or stderr");
    return e;
  }

  // "{name}" in argv -> the param's value as JSON writes it; unknown names are errors.
  std::string substitute(const std::string& arg, const nlohmann::json& params, const toml::source_region& src) {
    return filled(arg, params, src, "argv", false);
  }

  // The experiment's params as this run uses them: [params], the profile's, --param.
  nlohmann::json params_used(const Experiment& ex) const {
    nlohmann::json used = ex.params;
    used.merge_patch(profile_params_);
    return used;
  }

  // `text` with its placeholders filled (config/placeholders); each unknown name a located error.
  std::string filled(const std::string& text, const nlohmann::json& params, const toml::source_region& src, const std::string& what,
                     bool grouped = true) {
    FilledText f = fill_placeholders(text, params, grouped);
    for (const auto& name : f.unknown) error(src, what + " uses {" + name + "} but no param has that name");
    return std::move(f.text);
  }

  // Whether a case's sweep, with the `before` cases already read, stays within limits::kMaxCases.
  bool sweep_fits(const toml::table& sweep, std::size_t before) {
    std::int64_t count = 1;
    std::vector<std::string> sizes;
    for (auto&& [k, v] : sweep) {
      const toml::array* values = v.as_array();
      const auto n = static_cast<std::int64_t>(values ? values->size() : 1);
      sizes.push_back(std::to_string(n));
      count = n > 0 && count > limits::kMaxCases / n ? limits::kMaxCases + 1 : count * std::max<std::int64_t>(n, 1);
    }
    if (count + static_cast<std::int64_t>(before) <= limits::kMaxCases) return true;
    error(sweep.source(), "this sweep makes " + (count > limits::kMaxCases ? "more than " + std::to_string(limits::kMaxCases)
                                                                           : std::to_string(count)) +
                              " cases (" + join(sizes, " x ") + "); an experiment has at most " +
                              std::to_string(limits::kMaxCases) + " (docs/config.md, Limits)");
    return false;
  }

  // [profile.NAME] tables into `profiles`; the one asked for applied to ex (nullptr: none asked, or none such).
  const Profile* read_profiles(const toml::table& root, Experiment& ex, std::map<std::string, Profile>& profiles) {
    if (auto ps = table_at(root, "profile")) {
      for (auto&& [name, node] : *ps) {
        if (auto t = node.as_table()) {
          profiles[std::string(name.str())] = read_profile(std::string(name.str()), *t);
          ex.profile_names.emplace_back(name.str());
        } else {
          error(node.source(), "profile." + std::string(name.str()) + " must be a table");
        }
      }
    }
    if (profile_.empty()) return nullptr;
    auto it = profiles.find(profile_);
    if (it == profiles.end()) {
      error(root.source(), "no profile '" + profile_ + "' in this file" +
                               (ex.profile_names.empty() ? "" : " (it has: " + join(ex.profile_names, ", ") + ")"));
      return nullptr;
    }
    const Profile* applied = &it->second;
    ex.profile = profile_;
    if (applied->repeat) ex.repeat = *applied->repeat;
    ex.repeat_written |= applied->repeat.has_value();
    if (applied->precision) ex.precision = applied->precision;
    if (applied->warmup) ex.warmup = *applied->warmup;
    if (applied->timeout_s) ex.timeout_s = *applied->timeout_s;
    ex.params.merge_patch(applied->params);
    return applied;
  }

  // Every [[case]] into ex.cases; their base names, each once.
  std::set<std::string> read_cases(const toml::table& root, Experiment& ex) {
    std::set<std::string> base_names;
    const toml::node* cases = root.get("case");
    if (!cases) return base_names;
    const toml::array* arr = cases->as_array();
    if (!arr || !arr->is_array_of_tables()) {
      error(cases->source(), "'case' must be an array of tables: write each as [[case]]");
      return base_names;
    }
    for (auto&& node : *arr) {
      const toml::table& t = *node.as_table();
      auto before = ex.cases.size();
      read_case(t, ex);
      if (ex.cases.size() > before) {
        const std::string& base = ex.cases.back().base_name;
        if (!base_names.insert(base).second) error(t.source(), "duplicate case name '" + base + "'");
      }
    }
    return base_names;
  }

  // The applied profile's case list (after the views: a view of a dropped case is not a typo), and the
  // unknown names in every profile's.
  void keep_profile_cases(const Profile* applied, const std::set<std::string>& base_names, Experiment& ex) {
    if (applied && !applied->cases.empty()) {
      std::vector<Case> kept;
      for (auto& c : ex.cases)
        for (const auto& name : applied->cases)
          if (c.base_name == name) kept.push_back(c);
      ex.cases = std::move(kept);
    }
    for (const auto& [name, sources] : profile_case_src_)
      for (const auto& [c, src] : sources)
        if (!base_names.count(c)) error(src, "profile '" + name + "' names unknown case '" + c + "'");
  }

  void read_case(const toml::table& t, Experiment& ex) {
    check_keys(t, {"name", "call", "setup", "main", "argv", "script", "module", "params", "sweep", "subinterpreters", "gil", "show",
                   "requires", "expect", "extract"}, "[[case]]");
    Case c;
    c.where = pos(t.source());
    auto name = get_string(t, "name");
    if (!name || name->empty()) {
      error(t.source(), "a [[case]] needs a name");
      return;
    }
    c.base_name = *name;
    read_case_code(t, ex, c);
    read_case_settings(t, ex, c);
    std::vector<std::string> argv_templates = get_strings(t, "argv");
    if (!argv_templates.empty() && c.mode != CaseMode::main) error(t.get("argv")->source(), "argv is for main = true cases");
    const std::vector<nlohmann::json> combos = sweep_combos(t, ex);
    if (ex.cases.size() + combos.size() > static_cast<std::size_t>(limits::kMaxCases)) {
      error(t.source(), "case '" + *name + "' is past the " + std::to_string(limits::kMaxCases) +
                            " cases an experiment may have (docs/config.md, Limits)");
      return;
    }
    expand_case(t, c, combos, argv_templates, ex);
  }

  // What a case runs: a function (call, with its setup) or the script as __main__, and from which script.
  void read_case_code(const toml::table& t, const Experiment& ex, Case& c) {
    const std::string& name = c.base_name;
    auto call = get_string(t, "call");
    bool main = get_bool(t, "main").value_or(false);
    if (call && main) error(t.source(), "case '" + name + "': give either call = \"function\" or main = true, not both");
    if (!call && !main) error(t.source(), "case '" + name + "': say what to run: call = \"function\" or main = true");
    c.mode = main ? CaseMode::main : CaseMode::call;
    if (call) {
      c.function = *call;
      c.function_where = pos(t.get("call")->source());
    }
    if (auto setup = get_string(t, "setup")) {
      if (main) error(t.get("setup")->source(), "case '" + name + "': setup = \"...\" is for call cases (a main script sets up itself)");
      c.setup = *setup;
      c.setup_where = pos(t.get("setup")->source());
    }
    read_script_or_module(t, c.script, c.module);
    if (c.script.empty() && c.module.empty()) {  // the experiment's, unless the case names its own
      c.script = ex.script;
      c.module = ex.module;
    }
    if (c.script.empty() && c.module.empty() && !t.get("script") && !t.get("module"))
      error(t.source(), "case '" + name + "': no script (set [experiment] script or module, or the case's)");
  }

  // Its params over the experiment's, how it runs (subinterpreters, gil), and what it expects and extracts.
  void read_case_settings(const toml::table& t, const Experiment& ex, Case& c) {
    c.params = ex.params;
    if (auto p = table_at(t, "params")) c.params.merge_patch(to_json(*p));
    if (auto v = get_int(t, "subinterpreters", 1, limits::kMaxSubinterpreters)) c.subinterpreters = static_cast<int>(*v);
    if (auto v = get_string(t, "gil")) {
      if (auto gil = parse_subinterpreter_gil(*v)) c.gil = *gil;
      else error(t.get("gil")->source(), "gil must be \"own\" or \"shared\"");
    }
    if (auto v = get_string(t, "show")) c.show = *v;
    if (auto r = table_at(t, "requires")) c.requires = read_requirement(*r);
    if (auto e = t.get("expect")) {
      const toml::array* arr = e->as_array();
      if (!arr || !arr->is_array_of_tables()) error(e->source(), "'expect' must be written as [[case.expect]] tables");
      else
        for (auto&& node : *arr) c.expects.push_back(read_expect(*node.as_table()));
    }
    c.extract = experiment_extract_;
    if (auto e = table_at(t, "extract")) overlay_extracts(c.extract, read_extract(*e, "case.extract"));
    overlay_extracts(c.extract, extract_options_);
  }

  // Sweeps: the cartesian product of every key's values, counted before it is made; one empty combination
  // without a sweep.
  std::vector<nlohmann::json> sweep_combos(const toml::table& t, const Experiment& ex) {
    std::vector<nlohmann::json> combos{nlohmann::json::object()};
    if (auto sweep = table_at(t, "sweep"); sweep && sweep_fits(*sweep, ex.cases.size())) {
      for (auto&& [k, v] : *sweep) {
        const toml::array* values = v.as_array();
        if (!values || values->empty()) {
          error(v.source(), "sweep." + std::string(k.str()) + " must be a non-empty array of values");
          continue;
        }
        std::vector<nlohmann::json> next;
        const std::string key(k.str());
        if (overrides_.contains(key)) {  // --param n=100 on a sweep over n: the case runs once, with n=100
          for (auto combo : combos) {
            combo[key] = overrides_.at(key);
            next.push_back(std::move(combo));
          }
          combos = std::move(next);
          continue;
        }
        for (const auto& combo : combos)
          for (auto&& value : *values) {
            nlohmann::json c2 = combo;
            c2[std::string(k.str())] = to_json(value);
            next.push_back(std::move(c2));
          }
        combos = std::move(next);
      }
    }
    return combos;
  }

  // One case per sweep combination, its params and name made from the combination, into ex.cases.
  void expand_case(const toml::table& t, const Case& c, const std::vector<nlohmann::json>& combos,
                   const std::vector<std::string>& argv_templates, Experiment& ex) {
    const bool has_sweep = t.get("sweep") != nullptr;
    std::set<std::string> names;
    for (const auto& combo : combos) {
      Case expanded = c;
      expanded.sweep_values = combo;
      expanded.params.merge_patch(combo);
      // Precedence: [params] < case params < profile params < sweep values (a quick profile is quick
      // for every case, and a sweep still sweeps).
      for (auto& [k, v] : profile_params_.items())
        if (!combo.contains(k)) expanded.params[k] = v;
      if (combo.contains("subinterpreters")) {
        if (!combo["subinterpreters"].is_number_integer() || combo["subinterpreters"].get<std::int64_t>() < 1 ||
            combo["subinterpreters"].get<std::int64_t>() > limits::kMaxSubinterpreters)
          error(t.get("sweep")->source(), "sweep.subinterpreters values must be integers from 1 to " +
                                              std::to_string(limits::kMaxSubinterpreters));
        else
          expanded.subinterpreters = combo["subinterpreters"].get<int>();
      }
      if (has_sweep) {
        std::vector<std::string> parts;
        for (auto& [k, v] : combo.items()) parts.push_back(k + "=" + (v.is_string() ? v.get<std::string>() : v.dump()));
        expanded.name = c.base_name + "[" + join(parts, ",") + "]";
        // [1, "1"] or [1, 1]: two cases one name would pool into one cell.
        if (!names.insert(expanded.name).second) {
          error(t.get("sweep")->source(), "the sweep makes case '" + expanded.name + "' twice: its values must differ as text");
          continue;
        }
      } else {
        expanded.name = c.base_name;
      }
      for (const auto& a : argv_templates) expanded.argv.push_back(substitute(a, expanded.params, t.get("argv")->source()));
      if (expanded.subinterpreters > 0 && expanded.mode == CaseMode::main)
        error(t.source(), "case '" + c.base_name + "': subinterpreters run a function: use call = \"...\", not main");
      ex.cases.push_back(std::move(expanded));
    }
  }

  // [[view]]: each names cases that exist (an expanded name, or a base name with one case).
  void read_views(const toml::table& root, Experiment& ex) {
    const toml::node* node = root.get("view");
    if (!node) return;
    const toml::array* arr = node->as_array();
    if (!arr || !arr->is_array_of_tables()) {
      error(node->source(), "'view' must be an array of tables: write each as [[view]]");
      return;
    }
    for (auto&& item : *arr) {
      const toml::table& t = *item.as_table();
      check_keys(t, {"title", "kind", "a", "b", "key", "unit", "article"}, "[[view]]");
      if (names_replaced_case(t, ex)) continue;  // --param n=1000 on a sweep: a view of n=100 has nothing to show
      ViewSpec v;
      v.title = get_string(t, "title").value_or("");
      if (t.get("title")) v.title = filled(v.title, params_used(ex), t.get("title")->source(), "title");
      const std::string kind = get_string(t, "kind").value_or("");
      if (auto k = parse_view_kind(kind)) v.kind = *k;
      else error(t.get("kind") ? t.get("kind")->source() : t.source(), "a [[view]] needs kind = \"ratio\", \"value\" or \"gil_wait\"");
      v.a = view_case(t, "a", ex);
      if (v.kind == ViewKind::ratio) v.b = view_case(t, "b", ex);
      else if (t.get("b")) error(t.get("b")->source(), "'b' is for kind = \"ratio\"");
      v.key = get_string(t, "key").value_or("");
      if (v.kind == ViewKind::value && v.key.empty()) error(t.source(), "a value view needs key = \"a.dotted.key\" of the case's result");
      if (v.kind == ViewKind::gil_wait && t.get("key")) error(t.get("key")->source(), "'key' is not for kind = \"gil_wait\" (it reads the thread states)");
      v.unit = get_string(t, "unit").value_or("");
      if (const toml::node* a = t.get("article")) {
        if (auto i = a->as_integer()) v.article = static_cast<double>(i->get());
        else if (auto f = a->as_floating_point()) v.article = f->get();
        else error(a->source(), "'article' must be a number (the article's figure)");
      }
      if (v.title.empty()) v.title = v.kind == ViewKind::ratio ? v.a + " / " + v.b : v.kind == ViewKind::gil_wait ? v.a + " GIL wait" : v.a + " " + v.key;
      ex.views.push_back(std::move(v));
    }
  }

  // Whether a view names a case that a --param replacing its sweep took away (`a` or `b` a swept name
  // that is no case now): such a view is left out, not an error.
  bool names_replaced_case(const toml::table& t, const Experiment& ex) {
    if (overrides_.empty()) return false;
    for (const char* key : {"a", "b"}) {
      const auto name = get_string(t, key);
      if (!name || name->find('[') == std::string::npos) continue;
      const bool exists = std::any_of(ex.cases.begin(), ex.cases.end(), [&](const Case& c) { return c.name == *name; });
      if (!exists) return true;
    }
    return false;
  }

  // A case a view names, as its expanded name.
  std::string view_case(const toml::table& t, const char* key, const Experiment& ex) {
    auto name = get_string(t, key);
    if (!name) {
      error(t.source(), std::string("a [[view]] needs ") + key + " = \"case name\"");
      return "";
    }
    std::vector<std::string> expanded;
    for (const auto& c : ex.cases) {
      if (c.name == *name) return *name;
      if (c.base_name == *name) expanded.push_back(c.name);
    }
    if (expanded.size() == 1) return expanded.front();
    error(t.get(key)->source(), expanded.empty() ? "view names unknown case '" + *name + "'"
                                                 : "'" + *name + "' is swept: name one of " + join(expanded, ", "));
    return "";
  }

  // Rounds x cases within limits::kMaxPlannedRuns (each build multiplies them again when it runs).
  void check_plan_size(const Experiment& ex) {
    const auto runs = static_cast<std::int64_t>(ex.repeat + ex.warmup) * static_cast<std::int64_t>(ex.cases.size());
    if (runs > limits::kMaxPlannedRuns)
      error(rounds_src_, std::to_string(ex.repeat + ex.warmup) + " rounds x " + std::to_string(ex.cases.size()) + " cases is " +
                             std::to_string(runs) + " runs a build; gilhost plans at most " +
                             std::to_string(limits::kMaxPlannedRuns) + " (docs/config.md, Limits)");
  }

  std::string path_;
  std::string profile_;
  toml::source_region rounds_src_;  // where repeat is written, else the [experiment] table
  nlohmann::json profile_params_;
  nlohmann::json overrides_;
  fs::path dir_;
  toml::source_region baseline_src_;
  std::vector<ExtractSpec> experiment_extract_;  // [experiment.extract]: every case's
  std::vector<ExtractSpec> extract_options_;     // --extract: every case's, over the file's
  // Each profile's case names, where they are written (checked once every case is read).
  std::map<std::string, std::vector<std::pair<std::string, toml::source_region>>> profile_case_src_;
  std::vector<ConfigError> errors_;
};

// The cases the globs keep, in file order; a glob that matches nothing is an error that lists the cases.
void keep_matching_cases(Experiment& ex, const std::vector<std::string>& globs, const std::string& path) {
  if (globs.empty()) return;
  auto matches = [](const std::string& glob, const Case& c) {
    return ::fnmatch(glob.c_str(), c.name.c_str(), 0) == 0 || ::fnmatch(glob.c_str(), c.base_name.c_str(), 0) == 0;
  };
  std::vector<ConfigError> errors;
  for (const auto& glob : globs) {
    if (std::none_of(ex.cases.begin(), ex.cases.end(), [&](const Case& c) { return matches(glob, c); })) {
      std::vector<std::string> names;
      for (const auto& c : ex.cases) add_unique(names, c.base_name);
      errors.push_back({SourcePos{path, 0, 0}, "--case '" + glob + "' matches no case (its cases: " + join(names, ", ") + ")"});
    }
  }
  if (!errors.empty()) throw ConfigErrors(errors);
  std::vector<Case> kept;
  for (auto& c : ex.cases)
    if (std::any_of(globs.begin(), globs.end(), [&](const std::string& g) { return matches(g, c); })) kept.push_back(c);
  ex.cases = std::move(kept);
  ex.case_globs = globs;
}

Experiment load_root(const toml::table& root, const std::string& path, const LoadOptions& options) {
  nlohmann::json profile_params = nlohmann::json::object();
  if (!options.profile.empty())
    if (auto ps = root["profile"][options.profile]["params"].as_table()) profile_params = to_json(*ps);
  profile_params.merge_patch(options.params);  // the command line wins over the profile
  Experiment ex = Loader(path, options.profile, profile_params, options.params, options.extracts).load(root);
  ex.params.merge_patch(options.params);
  ex.extract_options = options.extracts;
  ex.param_overrides = options.params;
  keep_matching_cases(ex, options.case_globs, path);
  return ex;
}

ConfigErrors located(const std::string& path, int line, int column, std::string message) {
  return ConfigErrors({ConfigError{SourcePos{path, line, column}, std::move(message)}});
}

}  // namespace

Experiment load_experiment_text(const std::string& text, const std::string& path, const std::string& profile) {
  LoadOptions options;
  options.profile = profile;
  return load_experiment_text(text, path, options);
}

Experiment load_experiment_text(const std::string& text, const std::string& path, const LoadOptions& options) {
  // toml++ never sees the characters its whitespace tables break on (config/toml_guard.hpp): stand-ins
  // take their place, one code point for one, and the parsed table and messages get them back.
  const GuardedToml guarded = guard_toml(text);
  const auto& reserved = guarded.reserved;
  toml::table root;
  try {
    root = toml::parse(guarded.text, path);
  } catch (const toml::parse_error& err) {
    const int line = static_cast<int>(err.source().begin.line);
    const int column = static_cast<int>(err.source().begin.column);
    // The file's first error: a stand-in the file holds itself may come before toml++'s.
    if (reserved && (reserved->line < line || (reserved->line == line && reserved->column <= column)))
      throw located(path, reserved->line, reserved->column, reserved->message);
    throw located(path, line, column, restore_toml(err.description()));
  }
  if (reserved) throw located(path, reserved->line, reserved->column, reserved->message);
  restore_toml(root);
  return load_root(root, path, options);
}

Experiment load_experiment(const std::string& path, const std::string& profile) {
  LoadOptions options;
  options.profile = profile;
  return load_experiment(path, options);
}

Experiment load_experiment(const std::string& path, const LoadOptions& options) {
  std::string text;
  try {
    text = read_file(path);
  } catch (const std::exception& e) {
    throw ConfigErrors({ConfigError{SourcePos{path, 0, 0}, std::string("cannot read the file: ") + e.what()}});
  }
  return load_experiment_text(text, path, options);
}

std::pair<std::string, nlohmann::json> parse_param_override(const std::string& arg) {
  const auto eq = arg.find('=');
  const std::string key = trim(arg.substr(0, eq == std::string::npos ? 0 : eq));
  if (eq == std::string::npos || key.empty())
    throw std::invalid_argument("--param takes KEY=VALUE (as in TOML: n=5, mode=threads, sizes=[1, 2]), not '" + arg + "'");
  const std::string value = arg.substr(eq + 1);
  // Typed as a TOML value would be; what toml++ cannot read as one is taken as the text itself. toml++
  // sees it only through the guard (config/toml_guard.hpp), like any file.
  const GuardedToml guarded = guard_toml("v = " + value + "\n");
  if (!guarded.reserved) {
    try {
      toml::table t = toml::parse(guarded.text, std::string_view("--param"));
      restore_toml(t);
      if (const toml::node* v = t.get("v")) return {key, to_json(*v)};
    } catch (const toml::parse_error&) {
    }
  }
  return {key, value};
}

}  // namespace gilhost
