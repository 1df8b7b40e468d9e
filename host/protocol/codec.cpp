#include "protocol/codec.hpp"

#include <limits>
#include <stdexcept>
#include <type_traits>

#include "protocol/flat_encode.hpp"
#include "util/json_depth.hpp"

namespace gilhost::protocol {

using nlohmann::json;

const char* to_string(RunMode mode) {
  switch (mode) {
    case RunMode::embed: return "embed";
    case RunMode::exec: return "exec";
    case RunMode::subinterpreters: return "subinterpreters";
  }
  return "?";
}

const char* to_string(RunnerStage stage) {
  switch (stage) {
    case RunnerStage::spec: return "spec";
    case RunnerStage::load: return "load";
    case RunnerStage::init: return "init";
    case RunnerStage::bootstrap: return "bootstrap";
  }
  return "?";
}

// ---- encoding ----

void to_json(json& j, const CpuDelta& c) {
  j = {{"user_ns", c.user_ns},
       {"sys_ns", c.sys_ns},
       {"children_user_ns", c.children_user_ns},
       {"children_sys_ns", c.children_sys_ns},
       {"cpu_ns", c.cpu_ns},
       {"voluntary_switches", c.voluntary_switches},
       {"involuntary_switches", c.involuntary_switches}};
}

void to_json(json& j, const CaseError& e) { j = {{"type", e.type}, {"qualname", e.qualname}, {"message", e.message}}; }

void to_json(json& j, const Mark& m) { j = json::array({m.label, m.ns}); }

namespace {
template <typename T>
json optional_json(const std::optional<T>& v) {
  return v ? json(*v) : json();
}
}  // namespace

void to_json(json& j, const Outcome& o) {
  j = {{"has_result", o.has_result},
       {"result", o.result},
       {"error", optional_json(o.error)},
       {"exit_code", o.exit_code},
       {"metrics", o.metrics},
       {"marks", o.marks},
       {"gil_enabled_before", optional_json(o.gil_enabled_before)},
       {"import_ns", optional_json(o.import_ns)},
       {"gil_enabled", optional_json(o.gil_enabled)},
       {"gil_forced", o.gil_forced},
       {"gil_reenabled_by", o.gil_reenabled_by},
       {"threads_alive", optional_json(o.threads_alive)},
       {"python_version", o.python_version}};
  if (!o.thread_names.empty()) j["thread_names"] = o.thread_names;  // [[tid, name], ...]
  if (o.main_native_id) j["main_native_id"] = *o.main_native_id;
  if (!o.thread_ends.empty()) {
    json ends = json::array();  // [[native_id, started_ns, ended_ns, cpu_ns], ...]
    for (const ThreadEnd& e : o.thread_ends) ends.push_back({e.native_id, e.started_ns, e.ended_ns, e.cpu_ns});
    j["thread_ends"] = std::move(ends);
  }
  if (o.thread_ends_dropped > 0) j["thread_ends_dropped"] = o.thread_ends_dropped;
}

void to_json(json& j, const InterpreterOutcome& one) {
  j = one.outcome;
  j["end_ns"] = one.end_ns;
}

namespace {

json event_json(const ReadyEvent& e) {
  return {{"event", "ready"}, {"pid", e.pid}, {"init_ns", e.init_ns}, {"main_at_ns", e.main_at_ns}, {"load_ns", e.load_ns}};
}

json event_json(const CaseEvent& e) {
  json j = {{"event", "case"}, {"mode", to_string(e.mode)}, {"start_ns", e.start_ns}, {"end_ns", e.end_ns},
            {"wall_ns", e.wall_ns}, {"prepare_ns", e.prepare_ns}};
  if (e.init_ns) j["init_ns"] = *e.init_ns;
  if (e.bootstrap_ns) j["bootstrap_ns"] = *e.bootstrap_ns;
  if (e.bootstrap_cached) j["bootstrap_cached"] = *e.bootstrap_cached;
  j["cpu"] = e.cpu;
  if (e.mode == RunMode::subinterpreters) {
    j["subinterpreters"] = e.subinterpreters;
    j["gil"] = e.gil;
    j["per_interpreter"] = e.per_interpreter;
  }
  if (!e.note.empty()) j["note"] = e.note;
  if (e.outcome_json.empty()) j["outcome"] = e.outcome;  // else spliced in as it is (line_of)
  return j;
}

json event_json(const GilEvent& e) {
  json j = {{"event", "gil"}, {"interpreter", e.interpreter}, {"has_gil", e.has_gil}, {"helper_tid", e.helper_tid}};
  if (e.futex_hi > e.futex_lo) {
    j["futex_lo"] = e.futex_lo;
    j["futex_hi"] = e.futex_hi;
  }
  if (!e.note.empty()) j["note"] = e.note;
  if (!e.object.empty()) {
    j["object"] = e.object;
    j["object_offset"] = e.object_offset;
  }
  if (e.after_case) j["after_case"] = true;
  if (e.locate_ns > 0) j["locate_ns"] = e.locate_ns;
  if (e.from_cache) j["from_cache"] = true;
  return j;
}

json event_json(const FinalizedEvent& e) {
  return {{"event", "finalized"}, {"finalize_ns", e.finalize_ns}, {"max_rss_kb", e.max_rss_kb}, {"status", e.status},
          {"at_ns", e.at_ns}};
}

json event_json(const RunnerErrorEvent& e) {
  return {{"event", "error"}, {"stage", to_string(e.stage)}, {"message", e.message}};
}

}  // namespace

namespace {

// `j` as one line, with a case event's outcome_json spliced in as its last member.
std::string line_of(const json& j, const Event& event) {
  std::string line = j.dump(-1, ' ', false, json::error_handler_t::replace);
  const auto* c = std::get_if<CaseEvent>(&event);
  if (c && !c->outcome_json.empty() && !line.empty() && line.back() == '}') {
    line.pop_back();
    line += ",\"outcome\":" + c->outcome_json + "}";
  }
  return line;
}

}  // namespace

std::string encode(const Event& event) {
  return line_of(std::visit([](const auto& e) { return event_json(e); }, event), event);
}

std::string encode(const Event& event, const Envelope& from) {
  if (std::optional<std::string> line = flat_line(event, from)) return std::move(*line);
  return encode_as_document(event, from);
}

std::string encode_as_document(const Event& event, const Envelope& from) {
  json j = std::visit([](const auto& e) { return event_json(e); }, event);
  j["pid"] = from.pid;
  j["token"] = from.token;
  return line_of(j, event);
}

// ---- decoding: absent (or null) fields keep their defaults; a present field of the wrong type is an error ----

namespace {

struct DecodeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void wrong(const char* key, const char* expected) {
  throw DecodeError(std::string("'") + key + "' is not " + expected);
}

const json* field(const json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

std::int64_t as_int64(const json& v, const char* key) {
  if (!v.is_number_integer()) wrong(key, "an integer");
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    wrong(key, "a 64-bit integer");
  return v.get<std::int64_t>();
}

void read(const json& j, const char* key, std::int64_t& out) {
  if (const json* v = field(j, key)) out = as_int64(*v, key);
}
void read(const json& j, const char* key, int& out) {
  if (const json* v = field(j, key)) {
    const std::int64_t n = as_int64(*v, key);
    if (n < std::numeric_limits<int>::min() || n > std::numeric_limits<int>::max()) wrong(key, "a 32-bit integer");
    out = static_cast<int>(n);
  }
}
void read(const json& j, const char* key, std::uint64_t& out) {
  if (const json* v = field(j, key)) {
    if (!v->is_number_integer() || (!v->is_number_unsigned() && v->get<std::int64_t>() < 0))
      wrong(key, "an address (an integer >= 0)");
    out = v->get<std::uint64_t>();
  }
}
void read(const json& j, const char* key, bool& out) {
  if (const json* v = field(j, key)) {
    if (!v->is_boolean()) wrong(key, "true or false");
    out = v->get<bool>();
  }
}
void read(const json& j, const char* key, std::string& out) {
  if (const json* v = field(j, key)) {
    if (!v->is_string()) wrong(key, "a string");
    out = v->get<std::string>();
  }
}
template <typename T>
void read(const json& j, const char* key, std::optional<T>& out) {
  if (field(j, key)) {
    T v{};
    read(j, key, v);
    out = v;
  }
}
const json& object_at(const json& j, const char* key) {
  static const json empty = json::object();
  const json* v = field(j, key);
  if (!v) return empty;
  if (!v->is_object()) wrong(key, "an object");
  return *v;
}
const json& array_at(const json& j, const char* key) {
  static const json empty = json::array();
  const json* v = field(j, key);
  if (!v) return empty;
  if (!v->is_array()) wrong(key, "an array");
  return *v;
}

CpuDelta cpu_from(const json& j) {
  CpuDelta c;
  read(j, "user_ns", c.user_ns);
  read(j, "sys_ns", c.sys_ns);
  read(j, "children_user_ns", c.children_user_ns);
  read(j, "children_sys_ns", c.children_sys_ns);
  read(j, "cpu_ns", c.cpu_ns);
  read(j, "voluntary_switches", c.voluntary_switches);
  read(j, "involuntary_switches", c.involuntary_switches);
  return c;
}

Outcome outcome_from(const json& j) {
  Outcome o;
  read(j, "has_result", o.has_result);
  if (auto it = j.find("result"); it != j.end()) o.result = *it;
  if (field(j, "error")) {
    const json& e = object_at(j, "error");
    CaseError error;
    read(e, "type", error.type);
    read(e, "qualname", error.qualname);
    read(e, "message", error.message);
    o.error = std::move(error);
  }
  read(j, "exit_code", o.exit_code);
  o.metrics = object_at(j, "metrics");
  for (const json& m : array_at(j, "marks")) {
    if (!m.is_array() || m.size() != 2 || !m[0].is_string()) wrong("marks", "a list of [label, ns]");
    o.marks.push_back({m[0].get<std::string>(), as_int64(m[1], "marks")});
  }
  read(j, "gil_enabled", o.gil_enabled);
  read(j, "gil_enabled_before", o.gil_enabled_before);
  read(j, "import_ns", o.import_ns);
  read(j, "gil_forced", o.gil_forced);
  for (const json& name : array_at(j, "gil_reenabled_by")) {
    if (!name.is_string()) wrong("gil_reenabled_by", "a list of module names");
    o.gil_reenabled_by.push_back(name.get<std::string>());
  }
  read(j, "threads_alive", o.threads_alive);
  read(j, "python_version", o.python_version);
  for (const json& t : array_at(j, "thread_names")) {
    if (!t.is_array() || t.size() != 2 || !t[1].is_string()) wrong("thread_names", "a list of [native_id, name]");
    o.thread_names.emplace_back(as_int64(t[0], "thread_names"), t[1].get<std::string>());
  }
  read(j, "main_native_id", o.main_native_id);
  for (const json& e : array_at(j, "thread_ends")) {
    if (!e.is_array() || e.size() != 4) wrong("thread_ends", "a list of [native_id, started_ns, ended_ns, cpu_ns]");
    o.thread_ends.push_back({as_int64(e[0], "thread_ends"), as_int64(e[1], "thread_ends"), as_int64(e[2], "thread_ends"),
                             as_int64(e[3], "thread_ends")});
  }
  read(j, "thread_ends_dropped", o.thread_ends_dropped);
  return o;
}

RunMode mode_from(const std::string& s) {
  if (s == "embed") return RunMode::embed;
  if (s == "exec") return RunMode::exec;
  if (s == "subinterpreters") return RunMode::subinterpreters;
  throw DecodeError("unknown mode '" + s + "'");
}

RunnerStage stage_from(const std::string& s) {
  for (RunnerStage st : {RunnerStage::spec, RunnerStage::load, RunnerStage::init, RunnerStage::bootstrap})
    if (s == to_string(st)) return st;
  throw DecodeError("unknown stage '" + s + "'");
}

CaseEvent case_from(const json& j) {
  CaseEvent e;
  std::string mode;
  read(j, "mode", mode);
  e.mode = mode_from(mode);
  read(j, "start_ns", e.start_ns);
  read(j, "end_ns", e.end_ns);
  read(j, "wall_ns", e.wall_ns);
  read(j, "prepare_ns", e.prepare_ns);
  read(j, "init_ns", e.init_ns);
  read(j, "bootstrap_ns", e.bootstrap_ns);
  read(j, "bootstrap_cached", e.bootstrap_cached);
  e.cpu = cpu_from(object_at(j, "cpu"));
  if (!field(j, "outcome")) throw DecodeError("a case event without its outcome");
  e.outcome = outcome_from(object_at(j, "outcome"));
  read(j, "subinterpreters", e.subinterpreters);
  read(j, "gil", e.gil);
  for (const json& one : array_at(j, "per_interpreter")) {
    if (!one.is_object()) wrong("per_interpreter", "a list of objects");
    InterpreterOutcome io{outcome_from(one), 0};
    read(one, "end_ns", io.end_ns);
    e.per_interpreter.push_back(std::move(io));
  }
  read(j, "note", e.note);
  return e;
}

Event event_from(const json& j) {
  std::string name;
  read(j, "event", name);
  if (name == "case") return case_from(j);
  if (name == "ready") {
    ReadyEvent e;
    read(j, "pid", e.pid);
    read(j, "init_ns", e.init_ns);
    read(j, "main_at_ns", e.main_at_ns);
    read(j, "load_ns", e.load_ns);
    return e;
  }
  if (name == "gil") {
    GilEvent e;
    read(j, "interpreter", e.interpreter);
    read(j, "has_gil", e.has_gil);
    read(j, "futex_lo", e.futex_lo);
    read(j, "futex_hi", e.futex_hi);
    read(j, "note", e.note);
    read(j, "helper_tid", e.helper_tid);
    read(j, "object", e.object);
    read(j, "object_offset", e.object_offset);
    read(j, "after_case", e.after_case);
    read(j, "locate_ns", e.locate_ns);
    read(j, "from_cache", e.from_cache);
    return e;
  }
  if (name == "finalized") {
    FinalizedEvent e;
    read(j, "finalize_ns", e.finalize_ns);
    read(j, "max_rss_kb", e.max_rss_kb);
    read(j, "status", e.status);
    read(j, "at_ns", e.at_ns);
    return e;
  }
  if (name == "error") {
    RunnerErrorEvent e;
    std::string stage;
    read(j, "stage", stage);
    e.stage = stage_from(stage);
    read(j, "message", e.message);
    return e;
  }
  throw DecodeError(name.empty() ? "no \"event\" name" : "unknown event '" + name + "'");
}

}  // namespace

Decoded decode(const std::string& line) {
  Decoded out;
  if (json_nested_deeper_than(line)) {  // the runner cuts values at 64 levels: this is no runner's line
    out.error = "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
    return out;
  }
  const json j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    out.error = "not a JSON object";
    return out;
  }
  try {
    out.event = event_from(j);
    read(j, "pid", out.from.pid);
    read(j, "token", out.from.token);
  } catch (const DecodeError& e) {
    out.event.reset();
    out.error = e.what();
  }
  return out;
}

std::optional<Outcome> decode_outcome(const std::string& text, std::string& error) {
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    error = "the outcome is not a JSON object";
    return std::nullopt;
  }
  try {
    return outcome_from(j);
  } catch (const DecodeError& e) {
    error = std::string("the outcome's ") + e.what();
    return std::nullopt;
  }
}

}  // namespace gilhost::protocol
