#include "discover/selector.hpp"

#include <cctype>
#include <filesystem>
#include <set>

#include "util/strings.hpp"

namespace fs = std::filesystem;

namespace gilhost {

namespace {

bool is_path(const std::string& s) { return s.find('/') != std::string::npos; }

std::string canonical_or_self(const std::string& p) {
  std::error_code ec;
  auto c = fs::canonical(p, ec);
  return ec ? p : c.string();
}

std::string available(const std::vector<Interpreter>& found) {
  std::vector<std::string> labels;
  for (const auto& i : found)
    if (i.supported) labels.push_back(i.label);
  return labels.empty() ? "none found" : "found: " + join(labels, ", ");
}

// The builds one selector (without its `+gil`) names, in `picked`; what it names but cannot run, in `skipped`.
void select_one(const std::vector<Interpreter>& found, const std::string& s, const PathProber& probe_path,
                std::vector<Interpreter>& picked, std::vector<Skipped>& skipped) {
  if (s == "all" || s == "ft" || s == "gil") {
    bool any = false;
    for (const auto& i : found) {
      if (s == "ft" && !i.free_threaded) continue;
      if (s == "gil" && i.free_threaded) continue;
      if (!i.supported) {
        if (s == "all") skipped.push_back({s, i.label, i.unsupported_reason});
        continue;
      }
      picked.push_back(i);
      any = true;
    }
    if (!any && s != "all") skipped.push_back({s, "", std::string("no ") + (s == "ft" ? "free-threaded" : "GIL") + " build found"});
    return;
  }
  if (is_path(s)) {
    const std::string real = canonical_or_self(s);
    const Interpreter* hit = nullptr;
    for (const auto& i : found)
      if (i.executable == s || i.realpath == real) hit = &i;
    std::optional<Interpreter> probed;
    std::string reason;
    if (!hit && probe_path) {
      probed = probe_path(s, reason);
      if (probed) hit = &*probed;
    }
    if (!hit) skipped.push_back({s, "", reason.empty() ? "not a usable Python" : reason});
    else if (!hit->supported) skipped.push_back({s, hit->label, hit->unsupported_reason});
    else picked.push_back(*hit);
    return;
  }
  // Version forms.
  const bool ft = s.size() >= 2 && s.back() == 't' && std::isdigit(static_cast<unsigned char>(s[s.size() - 2]));
  const std::string body = ft ? s.substr(0, s.size() - 1) : s;
  const bool is_range = !body.empty() && (body[0] == '<' || body[0] == '>' || body[0] == '=' || body[0] == '!');
  VersionSpec spec;
  try {
    spec = VersionSpec::parse(body);
  } catch (const std::invalid_argument&) {
    skipped.push_back({s, "", "not a selector: use all, ft, gil, 3.12, 3.12.1, 3.13t, \">=3.11\", a path, or one of them + \"+gil\""});
    return;
  }
  std::vector<const Interpreter*> matches;
  for (const auto& i : found)
    if (i.supported && spec.matches(i.version) && (is_range || i.free_threaded == ft)) matches.push_back(&i);
  if (matches.empty()) {
    std::string why = "no " + std::string(ft ? "free-threaded " : "") + "build matches " + s + " (" + available(found) + ")";
    for (const auto& i : found)
      if (!i.supported && spec.matches(i.version) && i.free_threaded == ft) why = i.unsupported_reason;
    skipped.push_back({s, "", why});
  } else if (is_range) {
    for (const auto* i : matches) picked.push_back(*i);
  } else {
    // "3.12": the newest 3.12.x; the first found wins a tie (discovery order: explicit, gilhost build, pyenv, uv, PATH).
    const Interpreter* best = matches.front();
    for (const auto* i : matches)
      if (best->version < i->version) best = i;
    picked.push_back(*best);
  }
}

}  // namespace

bool strip_gil_suffix(std::string& selector) {
  constexpr std::string_view kSuffix = "+gil";
  if (selector.size() <= kSuffix.size() || !ends_with(selector, kSuffix)) return false;
  selector.resize(selector.size() - kSuffix.size());
  return true;
}

Selection select_interpreters(const std::vector<Interpreter>& found, const std::vector<std::string>& selectors,
                              const PathProber& probe_path) {
  Selection sel;
  std::set<std::string> taken;  // executable, and "+gil" for the forced variant: a column each
  for (const auto& raw : selectors) {
    const std::string as_written = trim(raw);
    std::string s = as_written;
    const bool force_gil = strip_gil_suffix(s);
    std::vector<Interpreter> picked;
    const std::size_t skips_before = sel.skipped.size();
    select_one(found, s, probe_path, picked, sel.skipped);
    for (std::size_t k = skips_before; k < sel.skipped.size(); ++k) sel.skipped[k].selector = as_written;
    // +gil on a GIL build named a build: a skip with its reason, not an unmatched selector.
    const bool any = !picked.empty();
    for (auto& i : picked) {
      if (force_gil && !i.free_threaded) {
        sel.skipped.push_back({as_written, i.label,
                               "+gil forces the GIL on in a free-threaded build (PYTHON_GIL=1); this build always has one"});
        continue;
      }
      if (force_gil) i = with_gil_forced(std::move(i));
      if (taken.insert(i.executable + (i.gil_forced ? "+gil" : "")).second) sel.selected.push_back(std::move(i));
    }
    if (!any && s != "all") {
      std::vector<std::string> why;
      for (std::size_t k = skips_before; k < sel.skipped.size(); ++k) why.push_back(sel.skipped[k].reason);
      std::string reason = why.empty() ? "selects no build" : join(why, "; ");
      if (reason.find("found") == std::string::npos) reason += " (" + available(found) + ")";
      sel.unmatched.push_back({as_written, "", reason});
    }
  }
  return sel;
}

}  // namespace gilhost
