// End to end: `gilhost build` of the real binary on a fake CPython source tree made at test time (its
// configure writes a Makefile whose targets "compile" in a blink and install a shell-script python3 that
// answers the smoke test and the probe), so every path of the command runs without compiling CPython.
// The data and cache folders are temporary ($XDG_DATA_HOME, $XDG_CACHE_HOME).
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "../unit/helpers.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"
#include "util/subprocess.hpp"

namespace fs = std::filesystem;
using gilhost_test::ScopedEnv;
using gilhost_test::slurp;
using gilhost_test::TempDir;
using gilhost_test::write_file;
using nlohmann::json;

namespace {

const std::string kGilhost = GILHOST_BINARY;

// A stand-in for CPython's configure: it records its arguments, writes the python3 that `make install`
// installs (its answers follow --disable-gil, or lie with $FAKE_CPYTHON_LIE) and a Makefile. Each step
// fails on request ($FAKE_CPYTHON_FAIL=configure|make|install); make waits for a signal when
// $FAKE_CPYTHON_MARK names a file to write its pid to. make always reports a missing optional module.
const char* kFakeConfigure = R"SH(#!/bin/sh
prefix=; ft=false; lib=libpython3.14.so
for a in "$@"; do
  case "$a" in
    --prefix=*) prefix="${a#--prefix=}";;
    --disable-gil) ft=true; lib=libpython3.14t.so;;
  esac
done
printf '%s\n' "$@" > configure-args
echo "checking for gcc... gcc"
if [ "$FAKE_CPYTHON_FAIL" = configure ]; then echo 'configure: error: no acceptable C compiler found in $PATH'; exit 1; fi
answer=$ft
[ -n "$FAKE_CPYTHON_LIE" ] && answer=false
cat > python3 <<EOF
#!/bin/sh
case "\$*" in
  *gilhost_smoke*)
    [ -f "\$PYTHONHOME/lib/$lib" ] && [ "\$LD_LIBRARY_PATH" = "\$PYTHONHOME/lib" ] || { echo "not run as a staged build" >&2; exit 1; }
    echo '{"gilhost_smoke": 1, "version": "3.14.7", "gil_disabled": $answer, "ldlibrary": "$lib"}';;
  *gilhost_probe*)
    home=\$(cd "\$(dirname "\$0")/.." && pwd)
    echo '{"gilhost_probe": 1, "implementation": "cpython", "version": "3.14.7", "release": "3.14.7", "free_threaded": $answer, "libpython": "'"\$home/lib/$lib"'", "prefix": "'"\$home"'", "compiler": "cc", "build_flags": ""}';;
  *) exit 1;;
esac
EOF
chmod +x python3
{ echo "PREFIX=$prefix"; echo "LIB=$lib"; cat "$(dirname "$0")/Makefile.fake"; } > Makefile
)SH";

const char* kFakeMakefile =
    "all:\n"
    "\t@echo 'gcc -pthread -c ../Objects/abstract.c -o Objects/abstract.o'\n"
    "\t@if [ -n \"$$FAKE_CPYTHON_MARK\" ]; then echo $$$$ > \"$$FAKE_CPYTHON_MARK\"; sleep 30; fi\n"
    "\t@echo 'The necessary bits to build these optional modules were not found:'\n"
    "\t@echo '_zstd'\n"
    "\t@echo 'To find the necessary bits, look in configure.ac and config.log.'\n"
    "\t@if [ \"$$FAKE_CPYTHON_FAIL\" = make ]; then echo 'Objects/abstract.c:1: error: fake compiler error'; exit 2; fi\n"
    "install:\n"
    "\t@if [ \"$$FAKE_CPYTHON_FAIL\" = install ]; then echo 'install: cannot create directory: fake'; exit 2; fi\n"
    "\tmkdir -p $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib\n"
    "\tcp python3 $(DESTDIR)$(PREFIX)/bin/python3\n"
    "\tcp configure-args $(DESTDIR)$(PREFIX)/lib/configure-args\n"
    "\ttouch $(DESTDIR)$(PREFIX)/lib/$(LIB)\n";

// A temporary data and cache folder, the fake tree Python-3.14.7/ and its tarball.
struct Workspace {
  TempDir tmp;
  ScopedEnv data{"XDG_DATA_HOME", (tmp / "data").c_str()};
  ScopedEnv cache{"XDG_CACHE_HOME", (tmp / "cache").c_str()};
  ScopedEnv fail{"FAKE_CPYTHON_FAIL", nullptr};
  ScopedEnv lie{"FAKE_CPYTHON_LIE", nullptr};
  ScopedEnv mark{"FAKE_CPYTHON_MARK", nullptr};
  fs::path tree = tmp / "src/Python-3.14.7";
  fs::path tarball = tmp / "python3.14_3.14.7.orig.tar.gz";
  fs::path pythons = tmp / "data/gilhost/pythons";

  Workspace() {
    write_file(tree / "Include/patchlevel.h", "#define PY_MAJOR_VERSION 3\n#define PY_VERSION \"3.14.7\"\n");
    write_file(tree / "configure", kFakeConfigure, true);
    write_file(tree / "Makefile.fake", kFakeMakefile);
    const auto tar = gilhost::run_capture({"tar", "-czf", tarball.string(), "-C", (tmp / "src").string(), "Python-3.14.7"}, 60);
    REQUIRE(tar.exit_code == 0);
  }

  // What pythons/ and tmp/ of the data folder hold: a failed build leaves neither a build nor a temporary.
  std::vector<std::string> builds() const { return names(pythons); }
  std::vector<std::string> temporaries() const { return names(tmp / "data/gilhost/tmp"); }
  std::vector<std::string> logs() const { return names(tmp / "data/gilhost/logs"); }

  static std::vector<std::string> names(const fs::path& dir) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
};

gilhost::Captured gilhost_cmd(std::vector<std::string> args) {
  args.insert(args.begin(), kGilhost);
  return gilhost::run_capture(args, 120);
}

int count_lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

}  // namespace

TEST_CASE("build: a tarball lands in DATA/pythons/LABEL, smoke-tested, with its manifest and log", "[e2e][build]") {
  Workspace w;
  const auto c = gilhost_cmd({"build", w.tarball.string(), "--free-threaded", "-j", "3"});
  INFO(c.out << c.err);
  REQUIRE(c.exit_code == 0);
  CHECK(w.builds() == std::vector<std::string>{"3.14.7t"});
  CHECK(w.temporaries().empty());
  const fs::path build = w.pythons / "3.14.7t";
  CHECK(fs::exists(build / "bin/python3"));
  CHECK(fs::exists(build / "lib/libpython3.14t.so"));

  // What configure was given: the final prefix, shared, free-threaded, the rpath.
  const std::string prefix = build.string();
  CHECK(lines_of(slurp(build / "lib/configure-args")) ==
        std::vector<std::string>{"--prefix=" + prefix, "--enable-shared", "--disable-gil",
                                 "LDFLAGS=-Wl,--enable-new-dtags,-rpath," + prefix + "/lib"});

  const json m = json::parse(slurp(build / "gilhost-build.json"));
  CHECK(m["label"] == "3.14.7t");
  CHECK(m["version"] == "3.14.7");
  CHECK(m["free_threaded"] == true);
  CHECK(m["source"] == w.tarball.string());
  CHECK(m["source_kind"] == "tarball");
  CHECK(m["source_sha256"] == gilhost::sha256_file(w.tarball.string()));
  CHECK(m["configure_args"] == json::array());
  CHECK(m["configure_command"] == json::array({"./configure", "--prefix=" + prefix, "--enable-shared", "--disable-gil",
                                               "LDFLAGS=-Wl,--enable-new-dtags,-rpath," + prefix + "/lib"}));
  CHECK(m["jobs"] == 3);
  CHECK(m["build_seconds"].get<double>() >= 0);
  CHECK(!m["gilhost_version"].get<std::string>().empty());

  // Not a terminal: one line per step; the log named and kept; the missing module named with its package.
  for (const char* step : {"[1/4] configure", "[2/4] compile", "[3/4] install", "[4/4] smoke test"})
    CHECK(c.err.find(std::string("gilhost: ") + step + ": ") != std::string::npos);
  const std::string log = m["log"];
  CHECK(fs::path(log).parent_path() == w.tmp / "data/gilhost/logs");
  CHECK(fs::path(log).filename().string().rfind("3.14.7t-", 0) == 0);
  CHECK(c.err.find("log: " + log) != std::string::npos);
  CHECK(slurp(log).find("gcc -pthread -c ../Objects/abstract.c -o Objects/abstract.o") != std::string::npos);
  CHECK(c.err.find("gilhost: warning: modules not built, their libraries' headers were not found: _zstd (libzstd-dev)") !=
        std::string::npos);
  CHECK(c.err.find("gilhost: built 3.14.7t in ") != std::string::npos);
  CHECK(c.err.find("-p 3.14.7t") != std::string::npos);

  // The same build again: nothing to do, said so; nothing written.
  const auto again = gilhost_cmd({"build", w.tarball.string(), "--free-threaded"});
  INFO(again.err);
  CHECK(again.exit_code == 0);
  CHECK(again.err == "gilhost: 3.14.7t is already built from the same source and arguments (" + prefix +
                         "); --force builds it again\n");
  CHECK(w.logs().size() == 1);
  CHECK(json::parse(slurp(build / "gilhost-build.json")) == m);

  // --force builds it again, in place.
  const auto forced = gilhost_cmd({"build", w.tarball.string(), "--free-threaded", "--force"});
  INFO(forced.err);
  CHECK(forced.exit_code == 0);
  CHECK(w.builds() == std::vector<std::string>{"3.14.7t"});
  CHECK(w.temporaries().empty());
  CHECK(w.logs().size() == 2);
  const json m2 = json::parse(slurp(build / "gilhost-build.json"));
  CHECK(m2["log"] != m["log"]);

  // --list, as a table and as JSON.
  const auto list = gilhost_cmd({"build", "--list"});
  CHECK(list.exit_code == 0);
  CHECK(list.out.find("3.14.7t") != std::string::npos);
  CHECK(list.out.find("free-threaded") != std::string::npos);
  CHECK(list.out.find(w.tarball.string()) != std::string::npos);
  const auto list_json = gilhost_cmd({"build", "--list", "--json"});
  REQUIRE(list_json.exit_code == 0);
  const json listed = json::parse(list_json.out);
  REQUIRE(listed.size() == 1);
  CHECK(listed[0]["label"] == "3.14.7t");
  CHECK(listed[0]["path"] == prefix);
  CHECK(listed[0]["manifest"] == m2);

  // gilhost pythons finds it like any build, by its source and label.
  const auto pythons = gilhost_cmd({"pythons", "--json"});
  REQUIRE(pythons.exit_code == 0);
  bool found = false;
  for (const auto& i : json::parse(pythons.out))
    if (i["executable"] == prefix + "/bin/python3") {
      found = true;
      CHECK(i["source"] == "gilhost build");
      CHECK(i["label"] == "3.14.7t");
      CHECK(i["free_threaded"] == true);
      CHECK(i["libpython"] == prefix + "/lib/libpython3.14t.so");
    }
  CHECK(found);

  // --remove takes it away; a second time there is nothing to remove.
  const auto removed = gilhost_cmd({"build", "--remove", "3.14.7t"});
  CHECK(removed.exit_code == 0);
  CHECK(w.builds().empty());
  CHECK(w.temporaries().empty());
  CHECK(gilhost_cmd({"build", "--list"}).out.find("3.14.7t") == std::string::npos);
  const auto twice = gilhost_cmd({"build", "--remove", "3.14.7t"});
  CHECK(twice.exit_code == 2);
  CHECK(count_lines(twice.err) == 1);
  CHECK(twice.err.find("no build labelled 3.14.7t") != std::string::npos);
}

TEST_CASE("build: a source tree, configure arguments, labels, and a label taken by another build", "[e2e][build]") {
  Workspace w;
  const auto before = Workspace::names(w.tree);
  const auto c = gilhost_cmd({"build", w.tree.string(), "--", "--with-pydebug"});
  INFO(c.out << c.err);
  REQUIRE(c.exit_code == 0);
  CHECK(w.builds() == std::vector<std::string>{"3.14.7-pydebug"});
  CHECK(Workspace::names(w.tree) == before);  // built out of the tree: the user's tree is as it was
  const std::string prefix = (w.pythons / "3.14.7-pydebug").string();
  CHECK(lines_of(slurp(w.pythons / "3.14.7-pydebug/lib/configure-args")) ==
        std::vector<std::string>{"--prefix=" + prefix, "--enable-shared", "LDFLAGS=-Wl,--enable-new-dtags,-rpath," + prefix + "/lib",
                                 "--with-pydebug"});
  const json m = json::parse(slurp(w.pythons / "3.14.7-pydebug/gilhost-build.json"));
  CHECK(m["source"] == w.tree.string());
  CHECK(m["source_kind"] == "tree");
  CHECK(m["source_sha256"] == "");
  CHECK(m["configure_args"] == json::array({"--with-pydebug"}));
  // Its label is no selector: the hint gives its path.
  CHECK(c.err.find("-p " + prefix + "/bin/python3") != std::string::npos);

  // The same tree and arguments: nothing to do.
  const auto again = gilhost_cmd({"build", w.tree.string(), "--", "--with-pydebug"});
  CHECK(again.exit_code == 0);
  CHECK(again.err.find("already built") != std::string::npos);

  // The user's LDFLAGS (environment, then argument) join the rpath; an argument without a word of its own
  // makes a hashed label.
  ScopedEnv env_ldflags("LDFLAGS", "-L/opt/env");
  const auto ld = gilhost_cmd({"build", w.tree.string(), "--", "LDFLAGS=-L/opt/x"});
  INFO(ld.err);
  REQUIRE(ld.exit_code == 0);
  const auto all = w.builds();
  REQUIRE(all.size() == 2);
  const std::string hashed = all[0] == "3.14.7-pydebug" ? all[1] : all[0];
  CHECK(hashed.size() == std::string("3.14.7-").size() + 8);
  const std::string ld_prefix = (w.pythons / hashed).string();
  CHECK(lines_of(slurp(w.pythons / hashed / "lib/configure-args")) ==
        std::vector<std::string>{"--prefix=" + ld_prefix, "--enable-shared",
                                 "LDFLAGS=-Wl,--enable-new-dtags,-rpath," + ld_prefix + "/lib -L/opt/env -L/opt/x"});
  CHECK(gilhost_cmd({"build", "--remove", hashed}).exit_code == 0);

  // --label chooses the name; a different build under a taken label needs --force.
  CHECK(gilhost_cmd({"build", w.tarball.string(), "--label", "mine"}).exit_code == 0);
  CHECK(w.builds() == std::vector<std::string>{"3.14.7-pydebug", "mine"});
  const auto taken = gilhost_cmd({"build", w.tarball.string(), "--free-threaded", "--label", "mine"});
  CHECK(taken.exit_code == 2);
  CHECK(count_lines(taken.err) == 1);
  CHECK(taken.err.find("holds another build") != std::string::npos);
  CHECK(json::parse(slurp(w.pythons / "mine/gilhost-build.json"))["free_threaded"] == false);
  const auto replaced = gilhost_cmd({"build", w.tarball.string(), "--free-threaded", "--label", "mine", "--force"});
  CHECK(replaced.exit_code == 0);
  CHECK(json::parse(slurp(w.pythons / "mine/gilhost-build.json"))["free_threaded"] == true);
  CHECK(w.temporaries().empty());
}

TEST_CASE("build: a failed step is named, its log's last lines shown, and nothing is left", "[e2e][build]") {
  for (const auto& [fail, step, line] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"configure", "configure", "configure: error: no acceptable C compiler found in $PATH"},
           {"make", "compile", "Objects/abstract.c:1: error: fake compiler error"},
           {"install", "install", "install: cannot create directory: fake"}}) {
    DYNAMIC_SECTION(step) {
      Workspace w;
      ScopedEnv failing("FAKE_CPYTHON_FAIL", fail.c_str());
      const auto c = gilhost_cmd({"build", w.tarball.string(), "--free-threaded"});
      INFO(c.err);
      CHECK(c.exit_code == 1);
      CHECK(c.err.find("gilhost: building 3.14.7t failed at step " + step + " (exited with status ") != std::string::npos);
      CHECK(c.err.find("nothing was installed") != std::string::npos);
      CHECK(c.err.find("\n  " + line + "\n") != std::string::npos);
      CHECK(w.builds().empty());
      CHECK(w.temporaries().empty());
      REQUIRE(w.logs().size() == 1);
      CHECK(slurp(w.tmp / "data/gilhost/logs" / w.logs().front()).find(line) != std::string::npos);
      // A compile that fails also says which optional modules were missing, and their packages.
      CHECK((c.err.find("_zstd (libzstd-dev)") != std::string::npos) == (step == "compile"));
    }
  }
}

TEST_CASE("build: a staged build that is not what was asked fails the smoke test and is not installed", "[e2e][build]") {
  Workspace w;
  ScopedEnv lying("FAKE_CPYTHON_LIE", "1");
  const auto c = gilhost_cmd({"build", w.tarball.string(), "--free-threaded"});
  INFO(c.err);
  CHECK(c.exit_code == 1);
  CHECK(c.err.find("failed at step smoke test: Py_GIL_DISABLED is 0, a free-threaded build was asked for") != std::string::npos);
  CHECK(w.builds().empty());
  CHECK(w.temporaries().empty());
  // The same lie about a GIL build is the truth: it passes.
  CHECK(gilhost_cmd({"build", w.tarball.string()}).exit_code == 0);
  CHECK(w.builds() == std::vector<std::string>{"3.14.7"});
}

namespace {

struct Signalled {
  bool compiling = false;  // make reached its compile and waited there for the signal
  pid_t recipe = 0;        // the pid of make's recipe shell
  gilhost::Captured result;
};

// Runs `gilhost build TARBALL` and sends it `sig` while make is compiling.
Signalled signal_mid_compile(const Workspace& w, int sig) {
  const fs::path mark = w.tmp / "make.pid", self = w.tmp / "gilhost.pid";
  ScopedEnv marking("FAKE_CPYTHON_MARK", mark.c_str());
  Signalled s;
  // The shell writes its pid and becomes gilhost.
  std::thread run([&] {
    s.result = gilhost::run_capture(
        {"/bin/sh", "-c", "echo $$ > '" + self.string() + "'; exec '" + kGilhost + "' build '" + w.tarball.string() + "'"}, 60);
  });
  for (int i = 0; i < 1000 && !s.compiling; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    s.compiling = fs::exists(mark) && fs::file_size(mark) > 0;
  }
  if (s.compiling) {
    s.recipe = std::stoi(slurp(mark));
    ::kill(std::stoi(slurp(self)), sig);
  }
  run.join();
  return s;
}

}  // namespace

TEST_CASE("build: Ctrl-C or SIGTERM mid-build kills the step and leaves nothing", "[e2e][build]") {
  for (int sig : {SIGINT, SIGTERM}) {
    DYNAMIC_SECTION("signal " << sig) {
      Workspace w;
      const Signalled s = signal_mid_compile(w, sig);
      REQUIRE(s.compiling);
      INFO(s.result.err);
      CHECK(s.result.exit_code == 128 + sig);
      CHECK(s.result.err.find("interrupted; nothing was installed") != std::string::npos);
      CHECK(gilhost_test::process_gone(s.recipe));  // killed with make's process group
      CHECK(w.builds().empty());
      CHECK(w.temporaries().empty());
    }
  }
}

TEST_CASE("build: a build killed outright leaves its temporary folder, which the next build removes", "[e2e][build]") {
  Workspace w;
  const Signalled s = signal_mid_compile(w, SIGKILL);
  REQUIRE(s.compiling);
  // make died with gilhost (PR_SET_PDEATHSIG); its recipe, in make's process group, is ended here.
  const pid_t group = ::getpgid(s.recipe);
  if (group > 0) ::kill(-group, SIGKILL);
  CHECK(w.builds().empty());
  CHECK(w.temporaries().size() == 1);
  const auto c = gilhost_cmd({"build", w.tarball.string()});
  CHECK(c.exit_code == 0);
  CHECK(w.builds() == std::vector<std::string>{"3.14.7"});
  CHECK(w.temporaries().empty());
}

TEST_CASE("build: bad input is one line on stderr and exit status 2, and changes nothing", "[e2e][build]") {
  Workspace w;
  write_file(w.tmp / "broken.tar.xz", std::string(4096, 'x'));
  write_file(w.tmp / "notes.txt", "hello");
  write_file(w.tmp / "other/README", "not CPython");
  const auto made = gilhost::run_capture(
      {"tar", "-czf", (w.tmp / "other.tar.gz").string(), "-C", (w.tmp / "other").string(), "."}, 60);
  REQUIRE(made.exit_code == 0);
  const std::string t = w.tarball.string();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"build", (w.tmp / "missing.tar.xz").string()}, "no such file or folder"},
      {{"build", (w.tmp / "notes.txt").string()}, "is neither a CPython source tree nor a tarball"},
      {{"build", (w.tmp / "other").string()}, "is not a CPython source tree: it has no configure and no Include/patchlevel.h"},
      {{"build", (w.tmp / "other.tar.gz").string()}, "is not a CPython source tree"},
      {{"build", (w.tmp / "broken.tar.xz").string()}, "cannot unpack"},
      {{"build", t, "--sha256", std::string(64, '0')}, "the sha256 of " + t + " is "},
      {{"build", t, "--sha256", "xyz"}, "--sha256 takes 64 hex digits"},
      {{"build", w.tree.string(), "--sha256", gilhost::sha256_file(t)}, "--sha256 checks a tarball"},
      {{"build", t, "--", "--disable-gil"}, "give --free-threaded"},
      {{"build", t, "--", "--prefix=/usr"}, "--prefix is set by gilhost build"},
      {{"build", t, "--label", "../x"}, "--label: "},
      {{"build", "--remove", "3.14.7"}, "no build labelled 3.14.7"},
      {{"build", "--list", t}, "--list takes no SOURCE"},
      {{"build"}, "give a SOURCE"},
      {{"build", "ftp://example.org/Python-3.14.7.tar.xz"}, "only http:// and https://"},
  };
  for (const auto& [args, message] : cases) {
    const auto c = gilhost_cmd(args);
    INFO(gilhost::join(args, " ") << "\n" << c.err);
    CHECK(c.exit_code == 2);
    CHECK(count_lines(c.err) == 1);
    CHECK(c.err.find(message) != std::string::npos);
  }
  // What CLI11 refuses is bad input too (its message has a second line, the --help hint).
  CHECK(gilhost_cmd({"build", t, "-j", "0"}).exit_code == 2);
  CHECK(gilhost_cmd({"build", t, "--no-such-option"}).exit_code == 2);
  CHECK(w.builds().empty());
  CHECK(w.temporaries().empty());
}

namespace {

// Python's http.server on a free port of 127.0.0.1, serving `root` until the object goes; each path asked
// for is appended to `requests`.
class LocalServer {
 public:
  LocalServer(const std::string& python, const fs::path& root, const fs::path& work)
      : port_file_(work / "port"), stop_file_(work / "stop"), requests_(work / "requests") {
    static const char* code = R"PY(
import http.server, os, sys
root, port_file, stop, requests = sys.argv[1:5]
class Handler(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *a, **k):
        super().__init__(*a, directory=root, **k)
    def log_message(self, *a):
        with open(requests, "a") as f:
            f.write(self.path + "\n")
server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
server.timeout = 0.05
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(port_file + ".tmp", port_file)
while not os.path.exists(stop):
    server.handle_request()
)PY";
    thread_ = std::thread([=] {
      gilhost::run_capture({python, "-c", code, root.string(), port_file_.string(), stop_file_.string(), requests_.string()}, 300);
    });
    for (int i = 0; i < 1000 && !fs::exists(port_file_); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  LocalServer(const LocalServer&) = delete;
  LocalServer& operator=(const LocalServer&) = delete;
  ~LocalServer() {
    write_file(stop_file_, "");
    thread_.join();
  }
  bool up() const { return fs::exists(port_file_); }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + slurp(port_file_) + "/" + path; }
  std::vector<std::string> requests() const { return lines_of(slurp(requests_)); }

 private:
  fs::path port_file_, stop_file_, requests_;
  std::thread thread_;
};

}  // namespace

TEST_CASE("build: a URL is downloaded into the cache once, checked, and reused", "[e2e][build][download]") {
  const std::string python = gilhost_test::find_on_path("python3");
  if (python.empty() || gilhost_test::find_on_path("curl").empty()) {
    WARN("no python3 or curl on PATH: the download is not tested");
    return;
  }
  Workspace w;
  fs::create_directories(w.tmp / "server");
  LocalServer server(python, w.tmp.path(), w.tmp / "server");
  REQUIRE(server.up());
  const std::string name = w.tarball.filename().string();
  const std::string url = server.url(name);
  const std::string sha = gilhost::sha256_file(w.tarball.string());
  const fs::path downloads = w.tmp / "cache/gilhost/downloads";

  const auto c = gilhost_cmd({"build", url, "--free-threaded", "--sha256", sha});
  INFO(c.err);
  REQUIRE(c.exit_code == 0);
  CHECK(c.err.find("gilhost: downloading " + url + "\n") != std::string::npos);
  const json m = json::parse(slurp(w.pythons / "3.14.7t/gilhost-build.json"));
  CHECK(m["source"] == url);
  CHECK(m["source_kind"] == "url");
  CHECK(m["source_sha256"] == sha);
  const auto kept = Workspace::names(downloads);
  REQUIRE(kept.size() == 2);
  CHECK(kept[0].substr(9) == name);
  CHECK(kept[1] == kept[0] + ".sha256");
  CHECK(slurp(downloads / kept[0]) == slurp(w.tarball));
  CHECK(server.requests() == std::vector<std::string>{"/" + name});

  // The same URL: the same build, nothing to do; with --force, built again from the kept download.
  CHECK(gilhost_cmd({"build", url, "--free-threaded"}).err.find("already built") != std::string::npos);
  const auto forced = gilhost_cmd({"build", url, "--free-threaded", "--force"});
  CHECK(forced.exit_code == 0);
  CHECK(forced.err.find("gilhost: using the download kept in " + (downloads / kept[0]).string()) != std::string::npos);
  CHECK(server.requests().size() == 1);

  // A kept file that no longer matches its checksum is downloaded again.
  write_file(downloads / kept[0], "damaged");
  CHECK(gilhost_cmd({"build", url, "--free-threaded", "--force"}).exit_code == 0);
  CHECK(server.requests().size() == 2);
  CHECK(slurp(downloads / kept[0]) == slurp(w.tarball));

  // A checksum that differs, and a file the server does not have: exit 2, nothing kept of either.
  const auto bad_sum = gilhost_cmd({"build", url + "?again", "--sha256", std::string(64, 'a')});
  CHECK(bad_sum.exit_code == 2);
  CHECK(bad_sum.err.find("gilhost: the sha256 of " + url + "?again is " + sha + ", not " + std::string(64, 'a')) !=
        std::string::npos);
  const auto missing = gilhost_cmd({"build", server.url("nothing.tar.xz")});
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("gilhost: cannot download " + server.url("nothing.tar.xz") + ": ") != std::string::npos);
  CHECK(missing.err.find("404") != std::string::npos);
  CHECK(Workspace::names(downloads) == kept);
  CHECK(w.builds() == std::vector<std::string>{"3.14.7t"});
  CHECK(w.temporaries().empty());
}
