#include "runner/runspec.hpp"

#include <algorithm>

#include "util/strings.hpp"
#include "util/tagged_number.hpp"

namespace gilhost {

namespace {
using nlohmann::json;

json to_wire(const json& v) {
  if (!v.is_structured()) return tag_non_finite(v);
  if (v.is_array()) {
    json out = json::array();
    for (const json& item : v) out.push_back(to_wire(item));
    return out;
  }
  json out = json::object();
  for (const auto& [key, item] : v.items()) out[key.rfind('$', 0) == 0 ? "$" + key : key] = to_wire(item);
  return out;
}

json from_wire(const json& v) {
  if (v.is_array()) {
    json out = json::array();
    for (const json& item : v) out.push_back(from_wire(item));
    return out;
  }
  if (!v.is_object()) return v;
  if (tagged_number_text(v)) return decode_tagged_number(v);  // ours: the case's own '$' keys were escaped
  json out = json::object();
  for (const auto& [key, item] : v.items()) out[key.rfind("$$", 0) == 0 ? key.substr(1) : key] = from_wire(item);
  return out;
}
std::string from_hex(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

std::string fmt_hex_byte(unsigned char c) {
  static const char digits[] = "0123456789abcdef";
  return {digits[c >> 4], digits[c & 15]};
}

// Arguments that are not UTF-8 (a shell's $'\xff') cannot be JSON or Python text: all of them as hex too,
// which the bootstrap decodes as Python decodes its own argv (os.fsdecode), and "argv" shown escaped.
void put_argv(json& j, const std::vector<std::string>& argv) {
  j["argv"] = argv;
  if (std::all_of(argv.begin(), argv.end(), [](const std::string& a) { return is_valid_utf8(a); })) return;
  json hex = json::array(), shown = json::array();
  for (const auto& a : argv) {
    std::string h;
    for (const unsigned char c : a) h += fmt_hex_byte(c);
    hex.push_back(h);
    shown.push_back(is_valid_utf8(a) ? a : escape_controls(a));
  }
  j["argv_hex"] = hex;
  j["argv"] = shown;
}
}  // namespace

nlohmann::json RunnerSpec::to_json() const {
  nlohmann::json j = {{"libpython", libpython}, {"executable", executable}, {"script", script},
          {"module", module},       {"mode", mode},           {"function", function},     {"setup", setup}, {"kwargs", to_wire(kwargs)},
          {"subinterpreters", subinterpreters}, {"gil", gil},
          {"free_threaded", free_threaded}, {"bootstrap_cache_dir", bootstrap_cache_dir}, {"locate_gil", locate_gil}};
  put_argv(j, argv);
  return j;
}

RunnerSpec RunnerSpec::from_json(const nlohmann::json& j) {
  RunnerSpec s;
  s.libpython = j.value("libpython", "");
  s.executable = j.at("executable").get<std::string>();
  s.script = j.at("script").get<std::string>();
  s.module = j.value("module", "");
  s.mode = j.value("mode", "call");
  s.function = j.value("function", "");
  s.setup = j.value("setup", "");
  s.kwargs = from_wire(j.value("kwargs", nlohmann::json::object()));
  s.argv = j.value("argv", std::vector<std::string>{});
  if (const auto hex = j.find("argv_hex"); hex != j.end() && hex->is_array()) {  // the bytes themselves
    s.argv.clear();
    for (const auto& h : *hex) s.argv.push_back(from_hex(h.get<std::string>()));
  }
  s.subinterpreters = j.value("subinterpreters", 0);
  s.gil = j.value("gil", "own");
  s.free_threaded = j.value("free_threaded", false);
  s.bootstrap_cache_dir = j.value("bootstrap_cache_dir", "");
  s.locate_gil = j.value("locate_gil", true);
  return s;
}

nlohmann::json RunnerSpec::python_spec(int index) const {
  json j = {{"executable", executable}, {"script", script}, {"module", module}, {"mode", mode}, {"function", function},
            {"setup", setup},           {"kwargs", kwargs},         {"index", index},   {"free_threaded", free_threaded}};
  put_argv(j, argv);
  return j;
}

}  // namespace gilhost
