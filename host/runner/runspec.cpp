#include "runner/runspec.hpp"

#include <algorithm>
#include <stdexcept>

#include "config/limits.hpp"
#include "util/json_reader.hpp"
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

namespace {
json handed_to_json(const std::vector<HandedGilOffset>& handed) {
  json out = json::array();
  for (const HandedGilOffset& h : handed) {
    json o = {{"has_gil", h.offset.has_gil}, {"word", h.offset.word_offset}, {"holder", h.offset.holder_delta},
              {"object", h.offset.object}};
    if (h.gil_on) o["gil_on"] = *h.gil_on;
    out.push_back(std::move(o));
  }
  return out;
}
}  // namespace

nlohmann::json RunnerSpec::to_json() const {
  nlohmann::json j = {{"libpython", libpython}, {"executable", executable}, {"script", script},
          {"module", module},       {"mode", mode},           {"function", function},     {"setup", setup}, {"kwargs", to_wire(kwargs)},
          {"subinterpreters", subinterpreters}, {"gil", gil},
          {"free_threaded", free_threaded}, {"bootstrap_cache_dir", bootstrap_cache_dir}, {"locate_gil", locate_gil}};
  if (!gil_offsets.empty()) j["gil_offsets"] = handed_to_json(gil_offsets);
  put_argv(j, argv);
  return j;
}

namespace {
// The runner reports it at its "spec" stage: what is wrong, not "spec" again.
[[noreturn]] void spec_error(const std::string& what) { throw std::runtime_error(what); }

const JsonNode* spec_field(const JsonNode& j, const char* key, JsonNode::Kind kind, const char* expected) {
  const JsonNode* v = j.find(key);
  if (v && v->kind != kind) spec_error(std::string("'") + key + "' is not " + expected);
  return v;
}
std::string text_at(const JsonNode& j, const char* key, const std::string& absent) {
  const JsonNode* v = spec_field(j, key, JsonNode::Kind::string, "a string");
  return v ? v->text : absent;
}
bool flag_at(const JsonNode& j, const char* key, bool absent) {
  const JsonNode* v = spec_field(j, key, JsonNode::Kind::boolean, "true or false");
  return v ? v->boolean : absent;
}
std::vector<std::string> texts_at(const JsonNode& j, const char* key) {
  std::vector<std::string> out;
  if (const JsonNode* v = spec_field(j, key, JsonNode::Kind::array, "a list")) {
    for (const JsonNode& item : v->items) {
      if (item.kind != JsonNode::Kind::string) spec_error(std::string("'") + key + "' is not a list of strings");
      out.push_back(item.text);
    }
  }
  return out;
}
std::uint64_t count_at(const JsonNode& j, const char* key) {
  const JsonNode* v = spec_field(j, key, JsonNode::Kind::unsigned_integer, "a count");
  return v ? v->unsigned_integer : 0;
}
std::int64_t signed_at(const JsonNode& j, const char* key) {
  const JsonNode* v = j.find(key);
  if (v && v->kind == JsonNode::Kind::integer) return v->integer;
  if (v && (v->kind != JsonNode::Kind::unsigned_integer || v->unsigned_integer > INT64_MAX))
    spec_error(std::string("'") + key + "' is not a 64-bit integer");
  return v ? static_cast<std::int64_t>(v->unsigned_integer) : 0;
}
std::vector<HandedGilOffset> handed_at(const JsonNode& j) {
  std::vector<HandedGilOffset> out;
  const JsonNode* list = spec_field(j, "gil_offsets", JsonNode::Kind::array, "a list");
  for (const JsonNode& item : list ? list->items : std::vector<JsonNode>{}) {
    if (item.kind != JsonNode::Kind::object) spec_error("'gil_offsets' is not a list of objects");
    HandedGilOffset h;
    if (item.find("gil_on")) h.gil_on = flag_at(item, "gil_on", false);
    h.offset.has_gil = flag_at(item, "has_gil", true);
    h.offset.word_offset = count_at(item, "word");
    h.offset.holder_delta = signed_at(item, "holder");
    h.offset.object = text_at(item, "object", "");
    out.push_back(std::move(h));
  }
  return out;
}
}  // namespace

RunnerSpec RunnerSpec::from_text(std::string_view text) {
  std::string error;
  const std::optional<JsonNode> j = read_json(text, error);
  if (!j) spec_error(error);
  if (j->kind != JsonNode::Kind::object) spec_error("not a JSON object");
  RunnerSpec s;
  s.libpython = text_at(*j, "libpython", "");
  if (!j->find("executable") || !j->find("script")) spec_error("no 'executable' or no 'script'");
  s.executable = text_at(*j, "executable", "");
  s.script = text_at(*j, "script", "");
  s.module = text_at(*j, "module", "");
  s.mode = text_at(*j, "mode", "call");
  s.function = text_at(*j, "function", "");
  s.setup = text_at(*j, "setup", "");
  if (const JsonNode* k = spec_field(*j, "kwargs", JsonNode::Kind::object, "an object"))
    s.kwargs = from_wire(to_nlohmann(*k));
  s.argv = texts_at(*j, "argv");
  if (j->find("argv_hex")) {  // the bytes themselves
    s.argv.clear();
    for (const std::string& h : texts_at(*j, "argv_hex")) s.argv.push_back(from_hex(h));
  }
  if (const JsonNode* n = j->find("subinterpreters")) {
    if (n->kind != JsonNode::Kind::unsigned_integer ||
        n->unsigned_integer > static_cast<std::uint64_t>(limits::kMaxSubinterpreters))
      spec_error("'subinterpreters' is not a count");
    s.subinterpreters = static_cast<int>(n->unsigned_integer);
  }
  s.gil = text_at(*j, "gil", "own");
  s.free_threaded = flag_at(*j, "free_threaded", false);
  s.bootstrap_cache_dir = text_at(*j, "bootstrap_cache_dir", "");
  s.gil_offsets = handed_at(*j);
  s.locate_gil = flag_at(*j, "locate_gil", true);
  return s;
}

nlohmann::json RunnerSpec::python_spec(int index) const {
  json j = {{"executable", executable}, {"script", script}, {"module", module}, {"mode", mode}, {"function", function},
            {"setup", setup},           {"kwargs", kwargs},         {"index", index},   {"free_threaded", free_threaded}};
  put_argv(j, argv);
  return j;
}

}  // namespace gilhost
