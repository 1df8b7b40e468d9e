#include "results/record_json.hpp"

#include <climits>
#include <cmath>
#include <cstdint>

#include "util/random_id.hpp"
#include "util/strings.hpp"
#include "util/tagged_number.hpp"

namespace gilhost {

using nlohmann::json;

namespace {

// Reads the fields of one JSON object; a field of the wrong kind is a RecordError that names it. An
// absent or null field is its default: older files lack fields newer ones have.
class FieldReader {
 public:
  FieldReader(const json& object, std::string what) : j_(object), what_(std::move(what)) {}

  const json* find(const char* key) const {
    if (!j_.is_object()) return nullptr;
    const auto it = j_.find(key);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  std::string text(const char* key) const {
    const json* v = find(key);
    if (!v) return "";
    if (!v->is_string()) wrong(key, "a string");
    return v->get<std::string>();
  }
  std::optional<std::string> maybe_text(const char* key) const {
    if (!find(key)) return std::nullopt;
    return text(key);
  }
  // An integer of 64 bits (a whole double such as 5.0 too); 2**63, 1e300 or 1.5 is a RecordError, never
  // a wrapped or truncated value shown as a measurement.
  std::optional<std::int64_t> maybe_integer(const char* key) const {
    const json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_number()) wrong(key, "a number");
    if (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
      wrong(key, "an integer of 64 bits");
    if (v->is_number_float()) {
      const double d = v->get<double>();
      // 2**63 itself is out of range: the largest int64 is not a double.
      if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || std::trunc(d) != d)
        wrong(key, "an integer of 64 bits");
      return static_cast<std::int64_t>(d);
    }
    return v->get<std::int64_t>();
  }
  std::int64_t integer(const char* key) const { return maybe_integer(key).value_or(0); }
  int small_integer(const char* key) const {
    const std::int64_t v = integer(key);
    if (v < INT_MIN || v > INT_MAX) wrong(key, "an integer of 32 bits");
    return static_cast<int>(v);
  }
  // A time, a size or a count: what is less than zero was never measured.
  std::optional<std::int64_t> maybe_count(const char* key) const {
    const auto v = maybe_integer(key);
    if (v && *v < 0) wrong(key, "a count, 0 or more");
    return v;
  }
  std::int64_t count(const char* key) const { return maybe_count(key).value_or(0); }
  int small_count(const char* key) const {
    const int v = small_integer(key);
    if (v < 0) wrong(key, "a count, 0 or more");
    return v;
  }
  double number(const char* key) const {
    const json* v = find(key);
    if (!v) return 0;
    if (!v->is_number() || !std::isfinite(v->get<double>())) wrong(key, "a finite number");
    return v->get<double>();
  }
  std::optional<bool> maybe_flag(const char* key) const {
    const json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) wrong(key, "true or false");
    return v->get<bool>();
  }
  bool flag(const char* key, bool otherwise) const { return maybe_flag(key).value_or(otherwise); }
  // A value the schema does not look into (a script's result, params): as it is.
  json any(const char* key, json otherwise) const {
    const json* v = find(key);
    return v ? *v : otherwise;
  }
  const json* object(const char* key) const {
    const json* v = find(key);
    if (v && !v->is_object()) wrong(key, "an object");
    return v;
  }
  const json* array(const char* key) const {
    const json* v = find(key);
    if (v && !v->is_array()) wrong(key, "a list");
    return v;
  }
  std::vector<std::string> texts(const char* key) const {
    std::vector<std::string> out;
    if (const json* list = array(key))
      for (const auto& item : *list)
        if (item.is_string()) out.push_back(item.get<std::string>());
    return out;
  }
  FieldReader nested(const char* key) const {
    const json* v = object(key);
    return FieldReader(v ? *v : empty_, what_ + "'s \"" + key + "\"");
  }

  [[noreturn]] void wrong(const char* key, const char* kind) const {
    throw RecordError(what_ + " whose \"" + key + "\" is not " + kind);
  }

 private:
  static inline const json empty_ = json::object();
  const json& j_;
  std::string what_;
};

// A session id as random_hex_id makes it; anything else would let one forged line join a session.
std::string session_id_from(const FieldReader& f) {
  std::string id = f.text("session_id");
  if (!id.empty() && !is_hex_id(id)) f.wrong("session_id", "32 lowercase hex digits");
  return id;
}

void put_origin(json& j, const RecordOrigin& o) {
  if (!o.host.empty()) j["host"] = o.host;
  if (!o.source.empty()) j["source"] = o.source;
  if (o.session) j["session"] = *o.session;
  if (!o.session_id.empty()) j["session_id"] = o.session_id;
  if (o.index) j["index"] = *o.index;
}

RecordOrigin origin_from(const FieldReader& f) {
  RecordOrigin o;
  o.host = f.text("host");
  o.source = f.text("source");
  if (auto s = f.maybe_integer("session")) o.session = static_cast<int>(*s);
  o.session_id = session_id_from(f);
  o.index = f.maybe_count("index");
  return o;
}

json optional_json(const std::optional<bool>& v) { return v ? json(*v) : json(); }

// The flat records' fields, each named once: writing and reading walk the same list.
template <typename Cpu, typename Visit>
void cpu_fields(Cpu& c, Visit&& visit) {
  visit("user_ns", c.user_ns);
  visit("sys_ns", c.sys_ns);
  visit("children_user_ns", c.children_user_ns);
  visit("children_sys_ns", c.children_sys_ns);
  visit("cpu_ns", c.cpu_ns);
  visit("voluntary_switches", c.voluntary_switches);
  visit("involuntary_switches", c.involuntary_switches);
}

template <typename Tree, typename Visit>
void tree_fields(Tree& t, Visit&& visit) {  // and the timeline, which is rows
  visit("samples", t.samples);
  visit("peak_tree_rss_bytes", t.peak_tree_rss_bytes);
  visit("peak_root_rss_bytes", t.peak_root_rss_bytes);
  visit("peak_threads", t.peak_threads);
  visit("peak_processes", t.peak_processes);
  visit("sampling_cost_ns", t.sampling_cost_ns);
  visit("idle_samples", t.idle_samples);
  visit("idle_check", t.idle_check);
}

template <typename Machine, typename Visit>
void machine_fields(Machine& m, Visit&& visit) {
  visit("hostname", m.hostname);
  visit("kernel", m.kernel);
  visit("arch", m.arch);
  visit("cpu_model", m.cpu_model);
  visit("cores", m.cores);
  visit("online_cpus", m.online_cpus);
  visit("memory_bytes", m.memory_bytes);
}

template <typename Build, typename Visit>
void build_fields(Build& b, Visit&& visit) {
  visit("label", b.label);
  visit("version", b.version);
  visit("executable", b.executable);
  visit("realpath", b.realpath);
  visit("source", b.source);
  visit("implementation", b.implementation);
  visit("free_threaded", b.free_threaded);
  visit("gil_forced", b.gil_forced);
  visit("shared", b.shared);
  visit("supported", b.supported);
  visit("libpython", b.libpython);
  visit("prefix", b.prefix);
  visit("compiler", b.compiler);
  visit("build_flags", b.build_flags);
  visit("unsupported_reason", b.unsupported_reason);
  visit("mode", b.mode);
  visit("original_label", b.original_label);
}

// Writes each field it is shown; an absent optional is left out.
struct FieldWriter {
  json& out;
  template <typename T>
  void operator()(const char* key, const T& value) const { out[key] = value; }
  void operator()(const char* key, const std::optional<std::string>& value) const {
    if (value) out[key] = *value;
  }
};

// Reads each field it is shown; an absent one keeps the default it has.
struct FieldFiller {
  const FieldReader& in;
  void operator()(const char* key, std::string& value) const { value = in.text(key); }
  void operator()(const char* key, std::optional<std::string>& value) const { value = in.maybe_text(key); }
  // Every integer of these records is a time, a size or a count.
  void operator()(const char* key, std::int64_t& value) const { value = in.maybe_count(key).value_or(value); }
  void operator()(const char* key, int& value) const {
    if (in.find(key)) value = in.small_count(key);
  }
  void operator()(const char* key, bool& value) const { value = in.flag(key, value); }
};

template <typename Record, typename Fields>
json write_fields(const Record& record, Fields&& fields) {
  json out = json::object();
  fields(record, FieldWriter{out});
  return out;
}

template <typename Record, typename Fields>
Record read_fields(const FieldReader& in, Fields&& fields) {
  Record record;
  fields(record, FieldFiller{in});
  return record;
}

json cpu_json(const CaseCpu& c) {
  return write_fields(c, [](const CaseCpu& x, auto&& visit) { cpu_fields(x, visit); });
}

CaseCpu cpu_from(const FieldReader& f) {
  return read_fields<CaseCpu>(f, [](CaseCpu& x, auto&& visit) { cpu_fields(x, visit); });
}

json tree_json(const TreeSummary& t) {
  json out = write_fields(t, [](const TreeSummary& x, auto&& visit) { tree_fields(x, visit); });
  json timeline = json::array();
  for (const auto& p : t.timeline) timeline.push_back({p.t_ms, p.tree_rss_bytes, p.threads, p.processes});
  out["timeline_columns"] = {"t_ms", "tree_rss_bytes", "threads", "processes"};
  out["timeline"] = timeline;
  return out;
}

TreeSummary tree_from(const FieldReader& f) {
  TreeSummary t = read_fields<TreeSummary>(f, [](TreeSummary& x, auto&& visit) { tree_fields(x, visit); });
  if (const json* rows = f.array("timeline"))
    for (const auto& p : *rows) {
      // [t_ms, tree_rss_bytes, threads, processes]; a row that is not one is passed over.
      if (!p.is_array() || p.size() < 2 || !p[0].is_number() || !p[1].is_number()) continue;
      TimelinePoint point{p[0].get<double>(), p[1].get<double>(), 0, 0};
      const auto small = [](const json& v) { return v.is_number_integer() && v.get<std::int64_t>() >= 0 && v.get<std::int64_t>() <= INT_MAX; };
      if (p.size() >= 4 && small(p[2]) && small(p[3])) {
        point.threads = p[2].get<int>();
        point.processes = p[3].get<int>();
      }
      t.timeline.push_back(point);
    }
  return t;
}

json times_json(const ThreadTimes& t) {
  json out = json::object();
  for (ThreadState s : kThreadStates) out[thread_state_name(s)] = t[s];
  return out;
}

ThreadTimes times_from(const FieldReader& f) {
  ThreadTimes t;
  for (ThreadState s : kThreadStates) t[s] = f.integer(thread_state_name(s));
  return t;
}

template <typename Thread, typename Visit>
void thread_fields(Thread& t, Visit&& visit) {  // and its times and timeline
  visit("pid", t.pid);
  visit("tid", t.tid);
  visit("name", t.name);
  visit("main", t.main);
  visit("python", t.python);
  visit("gil_located", t.gil_located);
  visit("start_ns", t.start_ns);
  visit("end_ns", t.end_ns);
  visit("unclassified_ns", t.unclassified_ns);
  visit("stolen_ns", t.stolen_ns);
}

template <typename States, typename Visit>
void thread_states_fields(States& s, Visit&& visit) {  // and the totals and the threads
  visit("interval_ms", s.interval_ms);
  visit("samples", s.samples);
  visit("probes", s.probes);
  visit("gil", s.gil);
  visit("threads_not_kept", s.threads_not_kept);
  visit("cost_ns", s.cost_ns);
  visit("coverage_why", s.coverage_why);
  visit("method", s.method);
  visit("python_unclassified_ns", s.python_unclassified_ns);
  visit("python_stolen_ns", s.python_stolen_ns);
  visit("threads_reported", s.threads_reported);
}

json thread_json(const ThreadRecord& t) {
  json out = write_fields(t, [](const ThreadRecord& x, auto&& visit) { thread_fields(x, visit); });
  out["ns"] = times_json(t.times);
  json timeline = json::array();
  for (const auto& seg : t.timeline) timeline.push_back({seg.start_ns / 1000, thread_state_name(seg.state)});
  out["timeline_us"] = timeline;
  return out;
}

ThreadRecord thread_from(const FieldReader& f) {
  ThreadRecord t = read_fields<ThreadRecord>(f, [](ThreadRecord& x, auto&& visit) { thread_fields(x, visit); });
  t.times = times_from(f.nested("ns"));
  if (const json* rows = f.array("timeline_us"))
    for (const auto& row : *rows) {
      // [start_us, state]; a row that is not one is passed over, as the RSS timeline's are.
      if (!row.is_array() || row.size() != 2 || !row[0].is_number() || !row[1].is_string()) continue;
      if (auto state = parse_thread_state(row[1].get<std::string>()))
        t.timeline.push_back({row[0].get<std::int64_t>() * 1000, *state});
    }
  return t;
}

json thread_states_json(const ThreadStates& s) {
  json out = write_fields(s, [](const ThreadStates& x, auto&& visit) { thread_states_fields(x, visit); });
  out["gil_wait_share"] = s.gil_wait_share();
  out["python_totals"] = times_json(s.python_totals);
  out["coverage"] = s.coverage ? json(*s.coverage) : json();
  out["steal_share"] = s.steal_share ? json(*s.steal_share) : json();
  out["gil_windows"] = s.gil_windows;
  json list = json::array();
  for (const auto& t : s.threads) list.push_back(thread_json(t));
  out["threads"] = list;
  return out;
}

ThreadStates thread_states_from(const FieldReader& f) {
  ThreadStates s = read_fields<ThreadStates>(f, [](ThreadStates& x, auto&& visit) { thread_states_fields(x, visit); });
  s.python_totals = times_from(f.nested("python_totals"));
  if (f.find("coverage")) s.coverage = f.number("coverage");
  if (f.find("steal_share")) s.steal_share = f.number("steal_share");
  if (const json* windows = f.array("gil_windows"))
    for (const auto& w : *windows)
      if (w.is_array() && w.size() == 2 && w[0].is_number_unsigned() && w[1].is_number_unsigned())
        s.gil_windows.push_back({w[0].get<std::uint64_t>(), w[1].get<std::uint64_t>()});
  if (const json* list = f.array("threads"))
    for (const auto& t : *list) s.threads.push_back(thread_from(FieldReader(t, "a thread of a run record's \"thread_states\"")));
  return s;
}

json error_json(const RunError& e) {
  json j = {{"type", e.type}, {"message", e.message}};
  if (!e.qualname.empty()) j["qualname"] = e.qualname;
  return j;
}

RunError error_from(const FieldReader& f) { return {f.text("type"), f.text("qualname"), f.text("message")}; }

SkipRecord skip_from_json(const json& j) {
  FieldReader f(j, "a skip record");
  SkipRecord s;
  s.experiment = f.text("experiment");
  s.selector = f.text("selector");
  s.case_name = f.text("case");
  s.label = f.text("label");
  s.interpreter = f.text("interpreter");
  s.reason = f.text("reason");
  s.origin = origin_from(f);
  s.original_label = f.maybe_text("original_label");
  return s;
}

BuildRecord build_from_json(const json& j) {
  return read_fields<BuildRecord>(FieldReader(j, "an entry of a meta record's \"interpreters\""),
                                  [](BuildRecord& x, auto&& visit) { build_fields(x, visit); });
}

MetaRecord meta_from_json(const json& j) {
  const auto format = j.find("format");
  if (format == j.end()) throw RecordError("a meta record without \"format\"");
  if (!format->is_number_integer() || format->get<long long>() < kOldestResultsFormat ||
      format->get<long long>() > kResultsFormat)
    throw RecordError("results format " + format->dump() + " is not one this gilhost reads (format " +
                      std::to_string(kResultsFormat) + "; was it written by a newer gilhost?)");
  FieldReader f(j, "a meta record");
  MetaRecord m;
  m.format = format->get<int>();
  m.gilhost_version = f.text("gilhost_version");
  m.started_unix_ns = f.integer("started_unix_ns");
  m.config_file = f.text("config_file");
  if (const json* machine = f.object("machine")) m.machine = machine_from_json(*machine);
  if (const json* ex = f.object("experiment")) m.experiment = experiment_info(*ex);
  if (const json* list = f.array("interpreters"))
    for (const auto& i : *list)
      if (i.is_object()) m.interpreters.push_back(build_from_json(i));
  if (const auto system = j.find("system"); system != j.end() && system->is_object()) m.system = *system;
  if (const auto cpus = j.find("cpus"); cpus != j.end() && cpus->is_string()) m.cpus = cpus->get<std::string>();
  if (const auto appended = j.find("appended_to_existing"); appended != j.end() && appended->is_boolean())
    m.appended_to_existing = appended->get<bool>();
  m.source = f.text("source");
  if (auto s = f.maybe_integer("session")) m.session = static_cast<int>(*s);
  m.session_id = session_id_from(f);
  return m;
}

}  // namespace

json to_json(const RunRecord& r) {
  json j = {{"type", "run"},
            {"experiment", r.experiment},
            {"case", r.case_name},
            {"base_case", r.base_case},
            {"params", tag_non_finite(r.params)},
            {"sweep", tag_non_finite(r.sweep)},
            {"interpreter", r.interpreter},
            {"python", r.python},
            {"executable", r.executable},
            {"free_threaded", r.free_threaded},
            {"mode", r.mode},
            {"subinterpreters", r.subinterpreters},
            {"gil", r.gil},
            {"round", r.round},
            {"repeat", r.repeat},
            {"warmup", r.warmup},
            {"time_unix_ns", r.time_unix_ns},
            {"status", status_name(r.status)},
            {"exit_code", r.exit_code},
            {"signal", r.signal},
            {"note", r.note},
            {"wall_ns", r.wall_ns},
            {"wall_from", r.wall_from},
            {"parent_wall_ns", r.parent_wall_ns},
            {"init_ns", r.init_ns},
            {"prepare_ns", r.prepare_ns},
            {"finalize_ns", r.finalize_ns},
            {"cpu", r.cpu ? cpu_json(*r.cpu) : json::object()},
            {"cpu_per_wall", r.cpu_per_wall},
            {"tree_cpu_ns", r.tree_cpu_ns},
            {"max_rss_kb", r.max_rss_kb},
            {"rss", r.rss ? tree_json(*r.rss) : json()},
            {"has_result", r.has_result},
            {"result", r.result},
            {"error", r.error ? error_json(*r.error) : json()},
            {"metrics", r.metrics},
            {"marks", r.marks},
            {"gil_enabled", optional_json(r.gil_enabled)},
            {"gil_enabled_before", optional_json(r.gil_enabled_before)},
            {"gil_forced", r.gil_forced},
            {"gil_reenabled_by", r.gil_reenabled_by},
            {"threads_alive_at_end", r.threads_alive_at_end ? json(*r.threads_alive_at_end) : json()},
            {"stdout", r.stdout_text},
            {"stderr", r.stderr_text},
            {"stdout_bytes", r.stdout_bytes},
            {"stderr_bytes", r.stderr_bytes},
            {"leftover_processes", r.leftover_processes},
            {"expect_ok", r.expect_ok}};
  if (r.import_ns) j["import_ns"] = *r.import_ns;
  if (r.bootstrap_ns) {
    j["bootstrap_ns"] = *r.bootstrap_ns;
    j["bootstrap_cached"] = r.bootstrap_cached;
  }
  if (!r.stopped.empty()) j["stopped"] = r.stopped;
  if (r.load_avg) j["load_avg"] = *r.load_avg;
  if (!r.stderr_file.empty()) j["stderr_file"] = r.stderr_file;
  if (r.exec_ns) j["exec_ns"] = *r.exec_ns;
  if (r.load_ns) j["load_ns"] = *r.load_ns;
  if (r.exit_ns) j["exit_ns"] = *r.exit_ns;
  if (r.locate_ns) {
    j["locate_ns"] = *r.locate_ns;
    j["locate_cached"] = r.locate_cached;
  }
  if (r.per_interpreter) j["per_interpreter"] = *r.per_interpreter;
  if (r.thread_states) j["thread_states"] = thread_states_json(*r.thread_states);
  if (r.thread_states_sampled) j["thread_states_sampled"] = thread_states_json(*r.thread_states_sampled);
  json checks = json::array();
  for (const auto& c : r.expect) checks.push_back({{"expect", c.expect}, {"ok", c.ok}, {"detail", c.detail}});
  j["expect"] = checks;
  put_origin(j, r.origin);
  if (r.original_interpreter) j["original_interpreter"] = *r.original_interpreter;
  return j;
}

namespace {
// The fields without which a record says nothing, and its status: RecordError names what is wrong.
RunStatus required_fields(const json& j) {
  std::vector<std::string> missing;
  for (const char* key : {"experiment", "case", "interpreter", "status"})
    if (!j.contains(key) || !j[key].is_string()) missing.push_back(std::string("\"") + key + "\"");
  if (!j.contains("wall_ns") || !j["wall_ns"].is_number()) missing.push_back("\"wall_ns\"");
  if (!missing.empty()) throw RecordError("a run record without " + join(missing, ", "));
  const std::string status = j["status"].get<std::string>();
  const auto parsed = parse_status(status);
  if (!parsed)
    throw RecordError("a run record whose \"status\" is \"" + status + "\" (ok, error, timeout, crashed or interrupted)");
  return *parsed;
}
}  // namespace

RunRecord run_from_json(const json& j) {
  const RunStatus status = required_fields(j);
  FieldReader f(j, "a run record");
  RunRecord r;
  r.experiment = f.text("experiment");
  r.case_name = f.text("case");
  r.base_case = f.text("base_case");
  r.params = f.any("params", json::object());
  r.sweep = f.any("sweep", json::object());
  r.interpreter = f.text("interpreter");
  r.python = f.text("python");
  r.executable = f.text("executable");
  r.free_threaded = f.flag("free_threaded", false);
  r.mode = f.text("mode");
  r.subinterpreters = f.small_integer("subinterpreters");
  r.gil = f.text("gil");
  r.round = f.small_count("round");
  r.repeat = f.small_count("repeat");
  r.warmup = f.flag("warmup", false);
  r.time_unix_ns = f.count("time_unix_ns");
  r.status = status;
  r.exit_code = f.small_integer("exit_code");
  r.signal = f.small_integer("signal");
  r.note = f.text("note");
  r.stopped = f.text("stopped");
  if (f.find("load_avg")) r.load_avg = f.number("load_avg");
  r.stderr_file = f.text("stderr_file");
  r.wall_ns = f.count("wall_ns");
  r.wall_from = f.text("wall_from");
  r.parent_wall_ns = f.count("parent_wall_ns");
  r.init_ns = f.count("init_ns");
  r.prepare_ns = f.count("prepare_ns");
  r.import_ns = f.maybe_count("import_ns");
  r.finalize_ns = f.count("finalize_ns");
  r.bootstrap_ns = f.maybe_count("bootstrap_ns");
  r.bootstrap_cached = f.flag("bootstrap_cached", false);
  r.exec_ns = f.maybe_integer("exec_ns");
  r.load_ns = f.maybe_integer("load_ns");
  r.exit_ns = f.maybe_integer("exit_ns");
  r.locate_ns = f.maybe_count("locate_ns");
  r.locate_cached = f.flag("locate_cached", false);
  if (const json* cpu = f.object("cpu"); cpu && !cpu->empty()) r.cpu = cpu_from(f.nested("cpu"));
  r.cpu_per_wall = f.number("cpu_per_wall");
  r.tree_cpu_ns = f.count("tree_cpu_ns");
  r.max_rss_kb = f.count("max_rss_kb");
  if (f.object("rss")) r.rss = tree_from(f.nested("rss"));
  if (f.object("thread_states")) r.thread_states = thread_states_from(f.nested("thread_states"));
  if (f.object("thread_states_sampled")) r.thread_states_sampled = thread_states_from(f.nested("thread_states_sampled"));
  r.has_result = f.flag("has_result", false);
  r.result = f.any("result", json());
  if (f.object("error")) r.error = error_from(f.nested("error"));
  r.metrics = f.any("metrics", json::object());
  r.marks = f.any("marks", json::array());
  r.gil_enabled = f.maybe_flag("gil_enabled");
  r.gil_enabled_before = f.maybe_flag("gil_enabled_before");
  r.gil_forced = f.flag("gil_forced", false);
  r.gil_reenabled_by = f.texts("gil_reenabled_by");
  r.threads_alive_at_end = f.maybe_integer("threads_alive_at_end");
  if (const json* per = f.find("per_interpreter")) r.per_interpreter = *per;
  r.stdout_text = f.text("stdout");
  r.stderr_text = f.text("stderr");
  r.stdout_bytes = f.count("stdout_bytes");
  r.stderr_bytes = f.count("stderr_bytes");
  r.leftover_processes = f.small_count("leftover_processes");
  if (const json* checks = f.array("expect"))
    for (const auto& c : *checks) {
      FieldReader check(c, "an entry of a run record's \"expect\"");
      r.expect.push_back({check.text("expect"), check.flag("ok", true), check.text("detail")});
    }
  r.expect_ok = f.flag("expect_ok", true);
  r.origin = origin_from(f);
  r.original_interpreter = f.maybe_text("original_interpreter");
  return r;
}


json to_json(const SkipRecord& s) {
  json j = {{"type", "skip"}, {"experiment", s.experiment}, {"reason", s.reason}};
  // A selector's skip names the selector and what it found; a case's, the case and the build.
  if (!s.selector.empty() || !s.label.empty()) {
    j["selector"] = s.selector;
    j["label"] = s.label;
  }
  if (!s.case_name.empty() || !s.interpreter.empty()) {
    j["case"] = s.case_name;
    j["interpreter"] = s.interpreter;
  }
  put_origin(j, s.origin);
  if (s.original_label) j["original_label"] = *s.original_label;
  return j;
}

json to_json(const MachineRecord& m) {
  return write_fields(m, [](const MachineRecord& x, auto&& visit) { machine_fields(x, visit); });
}

MachineRecord machine_from_json(const json& j) {
  return read_fields<MachineRecord>(FieldReader(j, "a meta record's \"machine\""),
                                    [](MachineRecord& x, auto&& visit) { machine_fields(x, visit); });
}

json to_json(const BuildRecord& b) {
  return write_fields(b, [](const BuildRecord& x, auto&& visit) { build_fields(x, visit); });
}

ExperimentInfo experiment_info(const json& document) {
  FieldReader f(document, "a meta record's \"experiment\"");
  ExperimentInfo ex;
  ex.document = document;
  ex.name = f.text("name");
  ex.description = f.text("description");
  ex.profile = f.text("profile");
  ex.baseline = f.text("baseline");
  if (auto repeat = f.maybe_integer("repeat")) ex.repeat = static_cast<int>(*repeat);
  ex.warmup = f.small_integer("warmup");
  if (f.find("precision")) ex.precision = f.number("precision");
  ex.params = f.any("params", json::object());
  if (const json* article = f.find("article"); article && article->is_object())
    for (const auto& [k, v] : article->items()) ex.article.emplace_back(k, v);
  if (const json* cases = f.array("cases"))
    for (const auto& c : *cases) {
      FieldReader one(c, "a case of a meta record's \"experiment\"");
      if (!c.is_object()) continue;
      CaseInfo info{one.text("name"), one.text("show"), one.text("base_name"), {}, {}};
      if (const json* sweep = one.find("sweep"); sweep && sweep->is_object())
        for (const auto& [k, v] : sweep->items())
          info.sweep.push_back({k, v.is_string() ? v.get<std::string>() : v.dump(),
                                v.is_number_integer() ? std::optional<std::int64_t>(v.get<std::int64_t>()) : std::nullopt});
      info.compare = one.text("compare");
      info.compare_what = one.text("compare_what");
      if (const json* extract = one.find("extract"); extract && extract->is_object())
        for (const auto& [name, regex] : extract->items())
          if (regex.is_string()) info.extract.emplace_back(name, regex.get<std::string>());
      ex.cases.push_back(std::move(info));
    }
  if (const json* views = f.array("views"))
    for (const auto& v : *views) {
      FieldReader one(v, "a view of a meta record's \"experiment\"");
      if (!v.is_object()) continue;
      ViewSpec view;
      view.title = one.text("title");
      view.kind = parse_view_kind(one.text("kind")).value_or(ViewKind::value);
      view.a = one.text("a");
      view.b = one.text("b");
      view.key = one.text("key");
      view.unit = one.text("unit");
      if (one.find("article")) view.article = one.number("article");
      ex.views.push_back(std::move(view));
    }
  return ex;
}

json to_json(const MetaRecord& m) {
  json interpreters = json::array();
  for (const auto& b : m.interpreters) interpreters.push_back(to_json(b));
  json j = {{"type", "meta"},
            {"format", m.format},
            {"gilhost_version", m.gilhost_version},
            {"started_unix_ns", m.started_unix_ns},
            {"machine", m.machine ? to_json(*m.machine) : json()},
            {"experiment", m.experiment.document},
            {"interpreters", interpreters},
            {"config_file", m.config_file}};
  if (!m.system.is_null()) j["system"] = m.system;
  if (!m.cpus.empty()) j["cpus"] = m.cpus;
  if (m.appended_to_existing) j["appended_to_existing"] = true;
  if (!m.source.empty()) j["source"] = m.source;
  if (m.session) j["session"] = *m.session;
  if (!m.session_id.empty()) j["session_id"] = m.session_id;
  return j;
}

json to_json(const ResultsLine& line) {
  return std::visit([](const auto& record) { return to_json(record); }, line);
}

ResultsLine line_from_json(const json& line) {
  const auto type = line.find("type");
  if (type == line.end() || !type->is_string()) throw RecordError("not a gilhost record (it has no \"type\")");
  const std::string t = type->get<std::string>();
  if (t == "meta") return meta_from_json(line);
  if (t == "run") return run_from_json(line);
  if (t == "skip") return skip_from_json(line);
  throw RecordError("unknown record type \"" + t + "\"");
}

}  // namespace gilhost
