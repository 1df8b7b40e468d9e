#include "cli/python_check.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include <nlohmann/json.hpp>

#include "util/strings.hpp"
#include "util/subprocess.hpp"

namespace fs = std::filesystem;

namespace gilhost {

namespace {

// Run by each build as `python -B -c CHECKER KIND TARGET NAME...`, KIND being script, module (imported by
// name) or main (run as python -m runs it). It parses and compiles; it never imports the user's file.
// find_spec imports a dotted module's parent packages (their __init__ runs); stdout goes to stderr meanwhile,
// so only the answer is on stdout.
constexpr const char* kChecker = R"PY(
import ast, json, sys, warnings
answer_out, sys.stdout = sys.stdout, sys.stderr
warnings.simplefilter("ignore")

def bind(body, bound, functions):
    star = False
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            bound.add(node.name)
            functions.append(node.name)
        elif isinstance(node, ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for target in getattr(node, "targets", None) or [node.target]:
                bound.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    star = True
                else:
                    bound.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)) or type(node).__name__ == "TryStar":
            for field in ("body", "orelse", "finalbody"):
                star |= bind(getattr(node, field, []), bound, functions)
            for handler in getattr(node, "handlers", []):
                star |= bind(handler.body, bound, functions)
    return star

def locate(kind, target):
    if kind == "script":
        return target
    import importlib.util
    sys.path.insert(0, "")
    spec = importlib.util.find_spec(target)
    if spec is not None and kind == "main" and spec.submodule_search_locations is not None:
        spec = importlib.util.find_spec(target + ".__main__")
        if spec is None:
            raise LookupError("'%s' is a package without __main__ (python -m %s would not run it)" % (target, target))
    if spec is None:
        raise LookupError("no module named '%s' from here (python -m %s would not find it)" % (target, target))
    return spec.origin or ""

def main(kind, target, names):
    answer = {"file": target, "error": "", "syntax": None, "functions": [], "missing": []}
    try:
        path = answer["file"] = locate(kind, target)
    except Exception as e:
        answer["error"] = str(e) or type(e).__name__
        return answer
    if not path.endswith(".py"):
        return answer  # built in or compiled: nothing to parse
    try:
        with open(path, "rb") as f:
            source = f.read()
    except OSError as e:
        answer["error"] = "cannot read %s: %s" % (path, e.strerror)
        return answer
    try:
        compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as e:
        answer["syntax"] = {"line": e.lineno or 0, "column": e.offset or 0, "message": e.msg}
        return answer
    except ValueError as e:
        answer["syntax"] = {"line": 0, "column": 0, "message": str(e)}
        return answer
    bound, functions = set(), []
    star = bind(ast.parse(source).body, bound, functions)
    answer["functions"] = functions
    answer["missing"] = [] if star else [n for n in names if n not in bound]
    return answer

answer_out.write(json.dumps(main(sys.argv[1], sys.argv[2], sys.argv[3:])) + "\n")
)PY";

// A function a case names, and where the file says so. Every key of a case that names a function of its
// file has its line in functions_named (call and setup).
struct NamedFunction {
  std::string key;  // "call" or "setup"
  std::string name;
  SourcePos where;
};

std::vector<NamedFunction> functions_named(const Case& c) {
  std::vector<NamedFunction> out;
  if (c.mode == CaseMode::call && !c.function.empty()) out.push_back({"call", c.function, c.function_where});
  if (!c.setup.empty()) out.push_back({"setup", c.setup, c.setup_where});
  return out;
}

// One file to check: a script, or a module found as the case's mode finds it.
struct Target {
  std::string kind;  // script, module, main
  std::string name;  // path or module name
  bool operator<(const Target& o) const { return std::tie(kind, name) < std::tie(o.kind, o.name); }
};

Target target_of(const Case& c) {
  if (!c.script.empty()) return {"script", c.script};
  return {c.mode == CaseMode::main ? "main" : "module", c.module};
}

// Whether a case of the file runs on the build (its `requires` allows it).
bool runs_on(const std::vector<const Case*>& cases, const Interpreter& build) {
  return std::any_of(cases.begin(), cases.end(), [&](const Case* c) {
    return !c->requires.python || c->requires.python->matches(build.version);
  });
}

std::string shown(const std::string& path) {
  std::error_code ec;
  const fs::path rel = fs::proximate(path, ec);
  return ec || rel.empty() || rel.native().rfind("..", 0) == 0 ? path : rel.string();
}

CheckerAnswer ask(const Interpreter& build, const Target& t, const std::set<std::string>& names) {
  std::vector<std::string> argv{build.executable, "-B", "-c", kChecker, t.kind, t.name};
  argv.insert(argv.end(), names.begin(), names.end());
  const Captured c = run_capture(argv, 60);
  if (c.exit_code != 0)
    throw std::runtime_error("the checker failed on " + build.label + (c.timed_out ? " (timed out)" : "") + ": " +
                             trim(c.err));
  return parse_checker_answer(c.out);
}

// What the builds said of each file: a problem that depends on the build is one line, with the builds it
// fails on ("(on 3.9.18, 3.10.13)"); the names of a file come from a build that parsed it.
struct Findings {
  std::map<std::string, std::vector<std::string>> on_builds;  // message -> builds
  std::map<Target, CheckerAnswer> parsed;

  void add(const Experiment& ex, const Target& t, const Interpreter& b, CheckerAnswer a) {
    if (!a.error.empty()) on_builds[shown(ex.path) + ": " + t.name + ": " + a.error].push_back(b.label);
    else if (a.syntax)
      on_builds[shown(a.file) + ":" + std::to_string(a.syntax->line) + ":" + std::to_string(a.syntax->column) +
                ": SyntaxError: " + a.syntax->message].push_back(b.label);
    else parsed.emplace(t, std::move(a));
  }
  std::vector<std::string> build_lines() const {
    std::vector<std::string> out;
    for (const auto& [what, on] : on_builds) out.push_back(what + " (on " + join(on, ", ") + ")");
    return out;
  }
};

// "x.toml:9:8: call = \"nope\": w.py has no top-level function 'nope' (functions: a, b)"; "" when it has.
std::string missing_line(const NamedFunction& f, const CheckerAnswer& a) {
  if (std::find(a.missing.begin(), a.missing.end(), f.name) == a.missing.end()) return {};
  return f.where.str() + ": " + f.key + " = \"" + f.name + "\": " + shown(a.file) + " has no top-level function '" +
         f.name + "' (functions: " + (a.functions.empty() ? "none" : join(a.functions, ", ")) + ")";
}

}  // namespace

CheckerAnswer parse_checker_answer(const std::string& text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("file") || !j.contains("missing"))
    throw std::runtime_error("not a checker's answer: " + text.substr(0, 200));
  try {
    CheckerAnswer a;
    a.file = j.at("file").get<std::string>();
    a.error = j.value("error", "");
    if (const auto& s = j.value("syntax", nlohmann::json()); s.is_object())
      a.syntax = PythonSyntaxError{s.at("line").get<int>(), s.at("column").get<int>(), s.at("message").get<std::string>()};
    a.functions = j.value("functions", std::vector<std::string>{});
    a.missing = j.at("missing").get<std::vector<std::string>>();
    return a;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("a checker's answer of the wrong shape: ") + e.what());
  }
}

namespace {

// Each file of the experiment, with the names its cases ask of it and the cases themselves.
struct Targets {
  std::map<Target, std::set<std::string>> names;
  std::map<Target, std::vector<const Case*>> cases_of;
  explicit Targets(const Experiment& ex) {
    for (const Case& c : ex.cases) {
      std::set<std::string>& asked = names[target_of(c)];  // every file has its entry, maybe empty
      for (const auto& f : functions_named(c)) asked.insert(f.name);
      cases_of[target_of(c)].push_back(&c);
    }
  }
};

// The located line of each call or setup that a file that parsed does not bind, once each.
void add_missing_lines(const Experiment& ex, const Findings& found, std::vector<std::string>& problems) {
  for (const Case& c : ex.cases)
    if (const auto it = found.parsed.find(target_of(c)); it != found.parsed.end())
      for (const auto& f : functions_named(c))
        if (const std::string line = missing_line(f, it->second); !line.empty() &&
            std::find(problems.begin(), problems.end(), line) == problems.end())  // a sweep: one line
          problems.push_back(line);
}

}  // namespace

std::vector<std::string> check_python_side(const Experiment& ex, const std::vector<Interpreter>& builds) {
  const Targets targets(ex);
  Findings found;
  std::set<std::string> executables;
  for (const Interpreter& b : builds) {
    if (!executables.insert(b.executable).second) continue;  // 3.14t+gil: the same parser as 3.14t
    for (const auto& [target, cases] : targets.cases_of)
      if (runs_on(cases, b))  // a script for 3.14 only need not compile on 3.9
        found.add(ex, target, b, ask(b, target, targets.names.at(target)));
  }
  std::vector<std::string> problems = found.build_lines();
  add_missing_lines(ex, found, problems);
  return problems;
}

std::vector<std::string> check_function_names(const Experiment& ex, const std::vector<Interpreter>& builds) {
  const Targets targets(ex);
  Findings found;
  for (const auto& [target, cases] : targets.cases_of) {
    if (targets.names.at(target).empty()) continue;  // main mode: nothing named, nothing to ask
    for (const Interpreter& b : builds)
      if (runs_on(cases, b)) {
        found.add(ex, target, b, ask(b, target, targets.names.at(target)));
        break;
      }
  }
  std::vector<std::string> problems;
  add_missing_lines(ex, found, problems);
  return problems;
}

}  // namespace gilhost
