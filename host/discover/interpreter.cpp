#include "discover/interpreter.hpp"

#include <map>

namespace gilhost {

nlohmann::json Interpreter::to_json() const {
  return {{"executable", executable},     {"realpath", realpath},     {"source", source},
          {"implementation", implementation}, {"version", version_full}, {"free_threaded", free_threaded},
          {"gil_forced", gil_forced},     {"shared", shared},         {"libpython", libpython},
          {"prefix", prefix},
          {"compiler", compiler},         {"build_flags", build_flags}, {"supported", supported},
          {"unsupported_reason", unsupported_reason}, {"label", label}, {"mode", mode()}};
}

Interpreter Interpreter::from_json(const nlohmann::json& j) {
  Interpreter i;
  i.executable = j.value("executable", "");
  i.realpath = j.value("realpath", "");
  i.source = j.value("source", "");
  i.implementation = j.value("implementation", "");
  i.version_full = j.value("version", "");
  i.version = Version::parse(i.version_full).value_or(Version{});
  i.free_threaded = j.value("free_threaded", false);
  i.gil_forced = j.value("gil_forced", false);
  i.shared = j.value("shared", false);
  i.libpython = j.value("libpython", "");
  i.prefix = j.value("prefix", "");
  i.compiler = j.value("compiler", "");
  i.build_flags = j.value("build_flags", "");
  i.supported = j.value("supported", true);
  i.unsupported_reason = j.value("unsupported_reason", "");
  i.label = j.value("label", "");
  return i;
}

void classify_support(Interpreter& i) {
  i.supported = true;
  i.unsupported_reason.clear();
  if (i.implementation != "cpython") {
    i.supported = false;
    i.unsupported_reason = i.implementation + " is not CPython";
  } else if (i.version < Version{3, 9, 0}) {
    i.supported = false;
    i.unsupported_reason = "gilhost needs CPython 3.9 or newer";
  }
}

Interpreter with_gil_forced(Interpreter i) {
  const std::string plain = i.short_label();
  i.gil_forced = true;
  i.label = i.label.compare(0, plain.size(), plain) == 0 ? i.short_label() + i.label.substr(plain.size())
                                                          : i.label + "+gil";
  return i;
}

void assign_labels(std::vector<Interpreter>& list) {
  std::map<std::string, int> count;
  for (const auto& i : list) ++count[i.short_label()];
  for (auto& i : list) i.label = count[i.short_label()] > 1 ? i.short_label() + " (" + i.executable + ")" : i.short_label();
}

}  // namespace gilhost
