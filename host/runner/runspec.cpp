#include "runner/runspec.hpp"

namespace gilhost {

nlohmann::json RunnerSpec::to_json() const {
  return {{"libpython", libpython}, {"executable", executable}, {"script", script},
          {"module", module},       {"mode", mode},           {"function", function},     {"kwargs", kwargs},
          {"argv", argv},           {"subinterpreters", subinterpreters}, {"gil", gil},
          {"free_threaded", free_threaded}, {"bootstrap_cache_dir", bootstrap_cache_dir}};
}

RunnerSpec RunnerSpec::from_json(const nlohmann::json& j) {
  RunnerSpec s;
  s.libpython = j.value("libpython", "");
  s.executable = j.at("executable").get<std::string>();
  s.script = j.at("script").get<std::string>();
  s.module = j.value("module", "");
  s.mode = j.value("mode", "call");
  s.function = j.value("function", "");
  s.kwargs = j.value("kwargs", nlohmann::json::object());
  s.argv = j.value("argv", std::vector<std::string>{});
  s.subinterpreters = j.value("subinterpreters", 0);
  s.gil = j.value("gil", "own");
  s.free_threaded = j.value("free_threaded", false);
  s.bootstrap_cache_dir = j.value("bootstrap_cache_dir", "");
  return s;
}

nlohmann::json RunnerSpec::python_spec(int index) const {
  return {{"executable", executable}, {"script", script}, {"module", module}, {"mode", mode}, {"function", function},
          {"kwargs", kwargs},         {"argv", argv},     {"index", index},
          {"free_threaded", free_threaded}};
}

}  // namespace gilhost
