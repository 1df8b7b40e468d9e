#pragma once
// "Did you mean": the nearest of the words a user could have meant, for a misspelt command or option.
#include <string>
#include <vector>

namespace gilhost {

// The candidate nearest to `word` by edit distance, when it is near enough to be a typo (at most 2 edits,
// and fewer than half the word); "" when none is.
std::string nearest_word(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace gilhost
