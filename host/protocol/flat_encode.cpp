#include "protocol/flat_encode.hpp"

#include <charconv>
#include <string_view>

namespace gilhost::protocol {

namespace {

// Members appended in the order given (the caller gives them sorted, as nlohmann's object keeps them).
class FlatObject {
 public:
  FlatObject() { out_ = "{"; }
  FlatObject& number(const char* key, std::int64_t v) { return raw(key, digits(v)); }
  FlatObject& unsigned_number(const char* key, std::uint64_t v) { return raw(key, digits(v)); }
  FlatObject& boolean(const char* key, bool v) { return raw(key, v ? "true" : "false"); }
  FlatObject& text(const char* key, std::string_view v) {
    if (!plain(v)) ok_ = false;
    return raw(key, "\"" + std::string(v) + "\"");
  }
  FlatObject& raw(const char* key, const std::string& json) {
    if (out_.size() > 1) out_ += ',';
    out_ += '"';
    out_ += key;
    out_ += "\":";
    out_ += json;
    return *this;
  }
  std::optional<std::string> done() { return ok_ ? std::optional<std::string>(out_ + "}") : std::nullopt; }

 private:
  template <typename T>
  static std::string digits(T v) {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
  }
  // Printable ASCII with no quote or backslash: written as it is by either encoder.
  static bool plain(std::string_view s) {
    for (const char c : s)
      if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return false;
    return true;
  }
  std::string out_;
  bool ok_ = true;
};

std::string cpu_object(const CpuDelta& c) {
  return *FlatObject()
              .number("children_sys_ns", c.children_sys_ns)
              .number("children_user_ns", c.children_user_ns)
              .number("cpu_ns", c.cpu_ns)
              .number("involuntary_switches", c.involuntary_switches)
              .number("sys_ns", c.sys_ns)
              .number("user_ns", c.user_ns)
              .number("voluntary_switches", c.voluntary_switches)
              .done();
}

std::optional<std::string> line(const ReadyEvent& e, const Envelope& from) {
  return FlatObject()
      .text("event", "ready")
      .number("init_ns", e.init_ns)
      .number("load_ns", e.load_ns)
      .number("main_at_ns", e.main_at_ns)
      .number("pid", from.pid)
      .text("token", from.token)
      .done();
}

std::optional<std::string> line(const GilEvent& e, const Envelope& from) {
  FlatObject o;
  if (e.after_case) o.boolean("after_case", true);
  o.text("event", "gil");
  if (e.from_cache) o.boolean("from_cache", true);
  if (e.futex_hi > e.futex_lo) o.unsigned_number("futex_hi", e.futex_hi).unsigned_number("futex_lo", e.futex_lo);
  o.boolean("has_gil", e.has_gil).number("helper_tid", e.helper_tid).number("interpreter", e.interpreter);
  if (e.locate_ns > 0) o.number("locate_ns", e.locate_ns);
  if (!e.note.empty()) o.text("note", e.note);
  if (!e.object.empty()) o.text("object", e.object).unsigned_number("object_offset", e.object_offset);
  return o.number("pid", from.pid).text("token", from.token).done();
}

// The main interpreter's case, its outcome as _finish wrote it (spliced in last, as codec does).
std::optional<std::string> line(const CaseEvent& e, const Envelope& from) {
  if (e.mode == RunMode::subinterpreters || e.outcome_json.empty()) return std::nullopt;
  FlatObject o;
  if (e.bootstrap_cached) o.boolean("bootstrap_cached", *e.bootstrap_cached);
  if (e.bootstrap_ns) o.number("bootstrap_ns", *e.bootstrap_ns);
  o.raw("cpu", cpu_object(e.cpu)).number("end_ns", e.end_ns).text("event", "case");
  if (e.init_ns) o.number("init_ns", *e.init_ns);
  o.text("mode", to_string(e.mode));
  if (!e.note.empty()) o.text("note", e.note);
  o.number("pid", from.pid).number("prepare_ns", e.prepare_ns).number("start_ns", e.start_ns);
  o.text("token", from.token).number("wall_ns", e.wall_ns).raw("outcome", e.outcome_json);
  return o.done();
}

std::optional<std::string> line(const FinalizedEvent& e, const Envelope& from) {
  return FlatObject()
      .number("at_ns", e.at_ns)
      .text("event", "finalized")
      .number("finalize_ns", e.finalize_ns)
      .number("max_rss_kb", e.max_rss_kb)
      .number("pid", from.pid)
      .number("status", e.status)
      .text("token", from.token)
      .done();
}

std::optional<std::string> line(const RunnerErrorEvent&, const Envelope&) { return std::nullopt; }

}  // namespace

std::optional<std::string> flat_line(const Event& event, const Envelope& from) {
  return std::visit([&](const auto& e) { return line(e, from); }, event);
}

}  // namespace gilhost::protocol
