#include <iostream>

#include "cli/commands.hpp"
#include "config/loader.hpp"
#include "util/strings.hpp"

namespace gilhost {

int cmd_check(const std::vector<std::string>& files) {
  int bad = 0;
  for (const auto& f : files) {
    try {
      Experiment ex = load_experiment(f);
      for (const auto& p : ex.profile_names) load_experiment(f, p);  // every profile must load too
      int expects = 0;
      for (const auto& c : ex.cases) expects += static_cast<int>(c.expects.size());
      std::cout << f << ": ok — " << ex.cases.size() << " cases, " << expects << " expectations"
                << (ex.profile_names.empty() ? "" : ", profiles: " + join(ex.profile_names, ", ")) << "\n";
    } catch (const ConfigErrors& e) {
      std::cerr << e.what() << "\n";
      ++bad;
    }
  }
  return bad ? 2 : 0;
}

}  // namespace gilhost
