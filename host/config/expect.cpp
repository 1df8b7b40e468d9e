#include "config/expect.hpp"

#include "util/tagged_number.hpp"
#include "util/strings.hpp"

namespace gilhost {

namespace {
template <typename T>
bool compare_as(CompareOp op, T x, T y) {
  switch (op) {
    case CompareOp::eq: return x == y;
    case CompareOp::ne: return x != y;
    case CompareOp::lt: return x < y;
    case CompareOp::le: return x <= y;
    case CompareOp::gt: return x > y;
    case CompareOp::ge: return x >= y;
  }
  return false;
}
}  // namespace

bool compare_json(CompareOp op, const nlohmann::json& tagged_a, const nlohmann::json& tagged_b) {
  // A NaN, an infinity or a big integer from the runner compares as the number it is.
  const nlohmann::json a = decode_tagged_number(tagged_a), b = decode_tagged_number(tagged_b);
  if (a.is_number() && b.is_number()) {
    // Integers beyond double precision still compare exactly when both are integers.
    if (a.is_number_integer() && b.is_number_integer()) return compare_as(op, a.get<long long>(), b.get<long long>());
    return compare_as(op, a.get<double>(), b.get<double>());
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
