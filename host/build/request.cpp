#include "build/request.hpp"

#include <sched.h>

#include "build/label.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"

namespace gilhost {

namespace {

// Configure arguments gilhost sets itself: given again, they would contradict what it promises.
std::string configure_arg_problem(const std::string& a) {
  if (a == "--disable-gil") return "give --free-threaded rather than --disable-gil after -- (it also labels the build ...t)";
  for (const char* own : {"--prefix", "--exec-prefix", "--enable-shared", "--disable-shared"})
    if (a == own || starts_with(a, std::string(own) + "="))
      return std::string(own) + " is set by gilhost build (builds are always shared, in its data folder)";
  return "";
}

}  // namespace

std::string command_problem(const BuildCommand& c) {
  const BuildRequest& r = c.request;
  const bool build_options = r.free_threaded || !r.configure_args.empty() || r.jobs != 0 || !r.label.empty() ||
                             !r.sha256.empty() || r.force;
  if (c.list && !c.remove.empty()) return "give either --list or --remove";
  if (c.list || !c.remove.empty()) {
    const char* what = c.list ? "--list" : "--remove";
    if (!r.source.empty()) return std::string(what) + " takes no SOURCE";
    if (build_options) return std::string(what) + " takes no build options";
    if (c.json && !c.list) return "--json goes with --list";
    return c.list ? "" : label_problem(c.remove);
  }
  if (c.json) return "--json goes with --list";
  if (r.source.empty()) return "give a SOURCE to build (a tarball, its URL or a CPython source tree), or --list / --remove LABEL";
  if (r.jobs < 0) return "-j takes a number of jobs of at least 1";
  if (!r.sha256.empty() && !is_sha256_hex(r.sha256)) return "--sha256 takes 64 hex digits, not '" + r.sha256 + "'";
  if (!r.label.empty()) {
    if (std::string why = label_problem(r.label); !why.empty()) return "--label: " + why;
  }
  for (const auto& a : r.configure_args)
    if (std::string why = configure_arg_problem(a); !why.empty()) return why;
  return "";
}

int available_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  const int n = CPU_COUNT(&set);
  return n > 0 ? n : 1;
}

}  // namespace gilhost
