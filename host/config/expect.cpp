#include "config/expect.hpp"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "util/tagged_number.hpp"
#include "util/strings.hpp"

namespace gilhost {

namespace {

// An integer's exact decimal text ("-12", "9223372036854775808"), if `v` is one (tagged or not).
std::optional<std::string> integer_text(const nlohmann::json& v) {
  if (v.is_number_unsigned()) return std::to_string(v.get<std::uint64_t>());
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  if (v.is_object() && v.contains("$int")) return tagged_number_text(v);
  return std::nullopt;
}

// -1, 0 or 1: the order of two canonical decimal integers, of any length.
int compare_integers(const std::string& a, const std::string& b) {
  const bool neg_a = a[0] == '-', neg_b = b[0] == '-';
  if (neg_a != neg_b) return neg_a ? -1 : 1;
  const std::string_view x = std::string_view(a).substr(neg_a), y = std::string_view(b).substr(neg_b);
  int magnitude = x.size() != y.size() ? (x.size() < y.size() ? -1 : 1) : x.compare(y) < 0 ? -1 : x.compare(y) > 0;
  return neg_a ? -magnitude : magnitude;
}

// The order of an integer and a double, exactly; nullopt when the double is NaN.
std::optional<int> compare_integer_double(const std::string& n, double d) {
  if (std::isnan(d)) return std::nullopt;
  if (std::isinf(d)) return d > 0 ? -1 : 1;
  const double whole = std::floor(d);
  std::string text = fmt::format("{:.0f}", whole);  // exact: a double's integer part has finitely many digits
  if (text == "-0") text = "0";
  const int c = compare_integers(n, text);
  return c != 0 ? c : whole != d ? -1 : 0;  // n == floor(d) < d when d has a fraction
}

// The order of two numbers (tagged ones decoded), integers exactly whatever their size; nullopt when
// either is no number or a NaN is involved.
std::optional<int> compare_numbers(const nlohmann::json& a, const nlohmann::json& b) {
  const auto ia = integer_text(a), ib = integer_text(b);
  if (ia && ib) return compare_integers(*ia, *ib);
  const nlohmann::json da = decode_tagged_number(a), db = decode_tagged_number(b);
  if (!da.is_number() || !db.is_number()) return std::nullopt;
  if (ia) return compare_integer_double(*ia, db.get<double>());
  if (ib) {
    const auto c = compare_integer_double(*ib, da.get<double>());
    return c ? std::optional<int>(-*c) : std::nullopt;
  }
  const double x = da.get<double>(), y = db.get<double>();
  if (std::isnan(x) || std::isnan(y)) return std::nullopt;
  return x < y ? -1 : x > y ? 1 : 0;
}

bool holds(CompareOp op, int order) {
  switch (op) {
    case CompareOp::eq: return order == 0;
    case CompareOp::ne: return order != 0;
    case CompareOp::lt: return order < 0;
    case CompareOp::le: return order <= 0;
    case CompareOp::gt: return order > 0;
    case CompareOp::ge: return order >= 0;
  }
  return false;
}

bool is_number(const nlohmann::json& v) { return decode_tagged_number(v).is_number(); }

}  // namespace

bool compare_json(CompareOp op, const nlohmann::json& a, const nlohmann::json& b) {
  // A NaN, an infinity or a big integer from the runner compares as the number it is; integers compare
  // exactly (2**63 is more than 9223372036854775807, 10**400 is no infinity).
  if (is_number(a) && is_number(b)) {
    if (const auto order = compare_numbers(a, b)) return holds(op, *order);
    return op == CompareOp::ne;  // NaN: unordered, equal to nothing
  }
  if (op == CompareOp::eq) return a == b;
  if (op == CompareOp::ne) return a != b;
  return false;  // ordering needs numbers
}

bool lookup_key(const nlohmann::json& result, const std::string& dotted, nlohmann::json& out) {
  const nlohmann::json* cur = &result;
  for (const auto& part : split(dotted, '.')) {
    if (cur->is_object() && cur->contains(part)) {
      cur = &(*cur)[part];
    } else if (cur->is_array() && !part.empty() && part.find_first_not_of("0123456789") == std::string::npos &&
               std::stoul(part) < cur->size()) {
      cur = &(*cur)[std::stoul(part)];
    } else {
      out = nullptr;
      return false;
    }
  }
  out = *cur;
  return true;
}

namespace {

CheckResult check_one(const Expectation& e, const RunFacts& f) {
  CheckResult r{e.describe(), true, {}};
  std::vector<std::string> why;
  if (!e.result_checks.empty()) {
    nlohmann::json subject;
    bool present = f.has_result && (e.key.empty() ? (subject = f.result, true) : lookup_key(f.result, e.key, subject));
    if (!present) {
      why.push_back(e.key.empty() ? "the run returned no result" : "the result has no '" + e.key + "'");
    } else {
      for (const auto& [op, value] : e.result_checks)
        if (!compare_json(op, subject, value)) why.push_back("got " + shortened(display_json(subject), 80));
    }
  }
  if (e.status && *e.status != f.status) why.push_back("status was " + f.status);
  if (e.exit_code && *e.exit_code != f.exit_code) why.push_back("exit code was " + std::to_string(f.exit_code));
  if (e.error && f.error_type != *e.error)
    why.push_back(f.error_type.empty() ? "no exception was raised" : "raised " + f.error_type);
  if (e.stdout_contains && f.stdout_text.find(*e.stdout_contains) == std::string::npos) why.push_back("not in stdout");
  if (e.stderr_contains && f.stderr_text.find(*e.stderr_contains) == std::string::npos) why.push_back("not in stderr");
  if (!why.empty()) {
    r.ok = false;
    r.detail = join(why, "; ");
    if (!e.note.empty()) r.detail += " (" + e.note + ")";
  }
  return r;
}
}  // namespace

std::vector<CheckResult> check_expectations(const Case& c, const Version& v, bool free_threaded, const RunFacts& f) {
  std::vector<CheckResult> out;
  bool status_said = false;
  for (const auto& e : c.expects) {
    if (!e.applies(v, free_threaded, !free_threaded || f.gil_forced)) continue;
    status_said |= e.constrains_status();
    out.push_back(check_one(e, f));
  }
  if (!status_said) {
    CheckResult r{"status ok", f.status == "ok", {}};
    if (!r.ok) r.detail = "status was " + f.status + (f.error_type.empty() ? "" : " (" + f.error_type + ")");
    out.insert(out.begin(), r);
  }
  return out;
}

}  // namespace gilhost
