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

void add(Selection& sel, std::set<std::string>& taken, const Interpreter& i) {
  if (taken.insert(i.executable).second) sel.selected.push_back(i);
}

std::string available(const std::vector<Interpreter>& found) {
  std::vector<std::string> labels;
  for (const auto& i : found)
    if (i.supported) labels.push_back(i.label);
  return labels.empty() ? "none found" : "found: " + join(labels, ", ");
}

}  // namespace

Selection select_interpreters(const std::vector<Interpreter>& found, const std::vector<std::string>& selectors,
                              const PathProber& probe_path) {
  Selection sel;
  std::set<std::string> taken;
  for (const auto& raw : selectors) {
    const std::string s = trim(raw);
    if (s == "all" || s == "ft" || s == "gil") {
      bool any = false;
      for (const auto& i : found) {
        if (s == "ft" && !i.free_threaded) continue;
        if (s == "gil" && i.free_threaded) continue;
        if (!i.supported) {
          if (s == "all") sel.skipped.push_back({s, i.label, i.unsupported_reason});
          continue;
        }
        add(sel, taken, i);
        any = true;
      }
      if (!any && s != "all") sel.skipped.push_back({s, "", std::string("no ") + (s == "ft" ? "free-threaded" : "GIL") + " build found"});
      continue;
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
      if (!hit) sel.skipped.push_back({s, "", reason.empty() ? "not a usable Python" : reason});
      else if (!hit->supported) sel.skipped.push_back({s, hit->label, hit->unsupported_reason});
      else add(sel, taken, *hit);
      continue;
    }
    // Version forms.
    const bool ft = s.size() >= 2 && s.back() == 't' && std::isdigit(static_cast<unsigned char>(s[s.size() - 2]));
    const std::string body = ft ? s.substr(0, s.size() - 1) : s;
    const bool is_range = !body.empty() && (body[0] == '<' || body[0] == '>' || body[0] == '=' || body[0] == '!');
    VersionSpec spec;
    try {
      spec = VersionSpec::parse(body);
    } catch (const std::invalid_argument&) {
      sel.skipped.push_back({s, "", "not a selector: use all, ft, gil, 3.12, 3.12.1, 3.13t, \">=3.11\" or a path"});
      continue;
    }
    std::vector<const Interpreter*> matches;
    for (const auto& i : found)
      if (i.supported && spec.matches(i.version) && (is_range || i.free_threaded == ft)) matches.push_back(&i);
    if (matches.empty()) {
      std::string why = "no " + std::string(ft ? "free-threaded " : "") + "build matches " + s + " (" + available(found) + ")";
      for (const auto& i : found)
        if (!i.supported && spec.matches(i.version) && i.free_threaded == ft) why = i.unsupported_reason;
      sel.skipped.push_back({s, "", why});
    } else if (is_range) {
      for (const auto* i : matches) add(sel, taken, *i);
    } else {
      // "3.12": the newest 3.12.x; the first found wins a tie (discovery order: explicit, gilhost build, pyenv, uv, PATH).
      const Interpreter* best = matches.front();
      for (const auto* i : matches)
        if (best->version < i->version) best = i;
      add(sel, taken, *best);
    }
  }
  return sel;
}

}  // namespace gilhost
