#include "cli/did_you_mean.hpp"

#include <algorithm>

namespace gilhost {

namespace {

// Optimal string alignment distance: a swap of two neighbours (rnu, run) is one edit.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

}  // namespace

std::string nearest_word(const std::string& word, const std::vector<std::string>& candidates) {
  if (word.empty()) return {};
  std::string best;
  std::size_t best_d = std::min<std::size_t>(2, (word.size() - 1) / 2) + 1;
  for (const auto& c : candidates)
    if (const std::size_t d = edit_distance(word, c); d < best_d) {
      best = c;
      best_d = d;
    }
  return best;
}

}  // namespace gilhost
