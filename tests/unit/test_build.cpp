// gilhost build's pure parts (labels, the version of a tree, the missing-module parser, the manifest,
// argument checks, compile progress, the smoke test's answer) and its small machinery (the store of
// builds, the step runner, processes, SHA-256, temporary folders).
#include <catch2/catch.hpp>

#include <signal.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "build/error.hpp"
#include "build/label.hpp"
#include "build/manifest.hpp"
#include "build/modules.hpp"
#include "build/progress.hpp"
#include "build/request.hpp"
#include "build/smoke.hpp"
#include "build/source.hpp"
#include "build/steps.hpp"
#include "build/store.hpp"
#include "helpers.hpp"
#include "util/paths.hpp"
#include "util/sha256.hpp"
#include "util/subprocess.hpp"
#include "util/temp_dir.hpp"

using gilhost_test::ScopedEnv;
using gilhost_test::slurp;
using gilhost_test::TempDir;
using gilhost_test::write_file;
namespace fs = std::filesystem;

namespace {

// The exit status of the BuildError `f` throws, or -1 when it throws none.
template <typename F>
int build_error_status(F&& f) {
  try {
    f();
  } catch (const gilhost::BuildError& e) {
    return e.exit_code;
  }
  return -1;
}

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("sha256: the FIPS 180-4 test vectors, a file, and what a checksum looks like", "[build][sha256]") {
  CHECK(gilhost::sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(gilhost::sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(gilhost::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // A million 'a', fed in uneven pieces: the buffering across blocks.
  gilhost::Sha256 s;
  const std::string piece(997, 'a');
  std::size_t left = 1000000;
  while (left > 0) {
    const std::size_t n = std::min(left, piece.size());
    s.update(piece.data(), n);
    left -= n;
  }
  CHECK(s.hex_digest() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");

  TempDir tmp;
  write_file(tmp / "f", "abc");
  CHECK(gilhost::sha256_file((tmp / "f").string()) == gilhost::sha256_hex("abc"));
  CHECK_THROWS_AS(gilhost::sha256_file((tmp / "missing").string()), std::system_error);

  CHECK(gilhost::is_sha256_hex("3b48dac8fb59f62eaa67ac83c1eb12bda1b7a08406dd286e252c11a66be27f81"));
  CHECK(gilhost::is_sha256_hex("3B48DAC8FB59F62EAA67AC83C1EB12BDA1B7A08406DD286E252C11A66BE27F81"));
  CHECK_FALSE(gilhost::is_sha256_hex("3b48dac8"));
  CHECK_FALSE(gilhost::is_sha256_hex("3b48dac8fb59f62eaa67ac83c1eb12bda1b7a08406dd286e252c11a66be27f8g"));
}

TEST_CASE("labels: version, t for free-threaded, a suffix for configure arguments", "[build][label]") {
  using gilhost::derive_label;
  CHECK(derive_label("3.14.7", false, {}) == "3.14.7");
  CHECK(derive_label("3.14.7", true, {}) == "3.14.7t");
  CHECK(derive_label("3.14.7", true, {"--with-pydebug"}) == "3.14.7t-pydebug");
  CHECK(derive_label("3.14.7", false, {"--without-mimalloc"}) == "3.14.7-nomimalloc");
  CHECK(derive_label("3.14.7", true, {"--with-pydebug", "--without-mimalloc"}) == "3.14.7t-pydebug-nomimalloc");
  CHECK(derive_label("3.14.7", false, {"--enable-optimizations", "--with-lto"}) == "3.14.7-pgo-lto");
  CHECK(derive_label("3.14.7", false, {"--disable-ipv6"}) == "3.14.7-noipv6");
  CHECK(derive_label("3.13.0rc1", false, {}) == "3.13.0rc1");
  CHECK(derive_label("3.15.0a1+", true, {}) == "3.15.0a1t");

  // A value, a variable or anything without a word: a short hash of all of them, stable and distinct.
  const std::string hashed = derive_label("3.14.7", false, {"--with-pydebug", "CFLAGS=-O0"});
  CHECK(hashed.size() == std::string("3.14.7-").size() + 8);
  CHECK(hashed.rfind("3.14.7-", 0) == 0);
  CHECK(hashed.find("pydebug") == std::string::npos);
  CHECK(hashed == derive_label("3.14.7", false, {"--with-pydebug", "CFLAGS=-O0"}));
  CHECK(hashed != derive_label("3.14.7", false, {"--with-pydebug", "CFLAGS=-O1"}));
  CHECK(hashed != derive_label("3.14.7", false, {"--with-pydebugCFLAGS=-O0"}));
  CHECK(derive_label("3.14.7", false, {"--with-lto=full"}) != "3.14.7-lto");

  CHECK(gilhost::label_problem("3.14.7t-pydebug").empty());
  CHECK(gilhost::label_problem("my_build+2").empty());
  CHECK_FALSE(gilhost::label_problem("").empty());
  CHECK_FALSE(gilhost::label_problem("../x").empty());
  CHECK_FALSE(gilhost::label_problem("a/b").empty());
  CHECK_FALSE(gilhost::label_problem(".hidden").empty());
  CHECK_FALSE(gilhost::label_problem("-x").empty());
  CHECK_FALSE(gilhost::label_problem("with space").empty());
  CHECK_FALSE(gilhost::label_problem(std::string(65, 'a')).empty());
}

TEST_CASE("source: PY_VERSION of patchlevel.h, what a tree needs, what SOURCE is", "[build][source]") {
  const std::string patchlevel =
      "#define PY_MAJOR_VERSION        3\n#define PY_MINOR_VERSION        14\n"
      "#define PY_RELEASE_LEVEL        PY_RELEASE_LEVEL_FINAL\n\n/* Version as a string */\n"
      "#define PY_VERSION              \"3.14.7\"\n/*--end constants--*/\n"
      "#define PY_VERSION_HEX _Py_PACK_FULL_VERSION( \\\n    PY_MAJOR_VERSION)\n";
  CHECK(gilhost::version_from_patchlevel(patchlevel) == std::optional<std::string>("3.14.7"));
  CHECK(gilhost::version_from_patchlevel("#  define PY_VERSION \"3.13.0rc1\"\n") == std::optional<std::string>("3.13.0rc1"));
  CHECK(gilhost::version_from_patchlevel("#define PY_VERSION \"3.15.0a1+\"\n") == std::optional<std::string>("3.15.0a1+"));
  CHECK_FALSE(gilhost::version_from_patchlevel("#define PY_VERSION_HEX 0x030e07f0\n"));
  CHECK_FALSE(gilhost::version_from_patchlevel("#define PY_VERSION \"three\"\n"));

  TempDir tmp;
  const fs::path tree = tmp / "Python-3.14.7";
  fs::create_directories(tree);
  CHECK(gilhost::cpython_tree_problem(tree.string()) == "it has no configure and no Include/patchlevel.h");
  write_file(tree / "configure", "#!/bin/sh\n", true);
  CHECK(gilhost::cpython_tree_problem(tree.string()) == "it has no Include/patchlevel.h");
  write_file(tree / "Include/patchlevel.h", patchlevel);
  CHECK(gilhost::cpython_tree_problem(tree.string()).empty());

  // A tarball's top folder is the tree; a tarball without one is its own tree.
  CHECK(gilhost::unpacked_tree(tmp.str()) == tree.string());
  write_file(tmp / "README", "x");
  CHECK(gilhost::unpacked_tree(tmp.str()) == tmp.str());

  using gilhost::SourceKind;
  CHECK(gilhost::classify_source("https://www.python.org/ftp/python/3.14.7/Python-3.14.7.tar.xz").kind == SourceKind::url);
  CHECK(gilhost::classify_source("http://example.org/p.tgz").kind == SourceKind::url);
  CHECK(gilhost::classify_source(tree.string()).kind == SourceKind::tree);
  write_file(tmp / "python3.14_3.14.7.orig.tar.xz", "not really");
  const auto tarball = gilhost::classify_source((tmp / "python3.14_3.14.7.orig.tar.xz").string());
  CHECK(tarball.kind == SourceKind::tarball);
  CHECK(tarball.location == (tmp / "python3.14_3.14.7.orig.tar.xz").string());
  CHECK(build_error_status([&] { gilhost::classify_source((tmp / "nothing.tar.xz").string()); }) == 2);
  CHECK(build_error_status([&] { gilhost::classify_source((tmp / "README").string()); }) == 2);
  CHECK(build_error_status([&] { gilhost::classify_source("ftp://example.org/p.tar.xz"); }) == 2);
  for (const char* name : {"a.tar.xz", "a.tar.gz", "a.tgz", "a.tar.bz2", "a.tar"}) CHECK(gilhost::has_tarball_suffix(name));
  CHECK_FALSE(gilhost::has_tarball_suffix("a.zip"));

  // The checksum check names both sums; an empty expectation checks nothing.
  CHECK(gilhost::verify_sha256((tmp / "README").string(), "") == gilhost::sha256_hex("x"));
  CHECK(gilhost::verify_sha256((tmp / "README").string(), "2D711642B726B04401627CA9FBAC32F5C8530FB1903CC4DB02258717921A4881") ==
        gilhost::sha256_hex("x"));
  CHECK(build_error_status([&] { gilhost::verify_sha256((tmp / "README").string(), std::string(64, '0')); }) == 2);
}

TEST_CASE("source: a download's file name keeps URLs apart and stays a plain name", "[build][source]") {
  const std::string a = gilhost::download_file_name("https://www.python.org/ftp/python/3.14.7/Python-3.14.7.tar.xz");
  const std::string b = gilhost::download_file_name("https://mirror.example.org/Python-3.14.7.tar.xz?x=1#top");
  CHECK(a.size() == 9 + std::string("Python-3.14.7.tar.xz").size());
  CHECK(a.substr(9) == "Python-3.14.7.tar.xz");
  CHECK(b.substr(9) == "Python-3.14.7.tar.xz");
  CHECK(a != b);
  CHECK(gilhost::download_file_name("https://example.org/") .find('/') == std::string::npos);
  CHECK(gilhost::download_file_name("https://example.org/a b.tgz").substr(9) == "a_b.tgz");
}

TEST_CASE("modules: make's lists of modules not built, and the Debian packages for them", "[build][modules]") {
  // As CPython 3.14's Tools/build/check_extension_modules.py prints them (three columns).
  const std::string make_output =
      "gcc -pthread -shared Modules/_abc.o -o Modules/_abc.cpython-314t-x86_64-linux-gnu.so\n"
      "The necessary bits to build these optional modules were not found:\n"
      "_dbm                      _gdbm                     _tkinter                \n"
      "_zstd                                                                       \n"
      "To find the necessary bits, look in configure.ac and config.log.\n"
      "\n"
      "Following modules built successfully but were removed because they could not be imported:\n"
      "_ssl                                                                        \n"
      "\n"
      "Could not build the ssl module!\n"
      "Python requires a OpenSSL 1.1.1 or newer\n"
      "\n"
      "Checked 112 modules (34 built-in, 72 shared, 1 n/a on linux-x86_64, 0 disabled, 4 missing, 1 failed on import)\n";
  const auto p = gilhost::parse_module_problems(make_output);
  CHECK(p.missing == std::vector<std::string>{"_dbm", "_gdbm", "_tkinter", "_zstd"});
  CHECK(p.removed == std::vector<std::string>{"_ssl"});
  CHECK(p.failed.empty());

  // setup.py's (3.10 and older) wording, and a list cut short by the next sentence.
  const auto old = gilhost::parse_module_problems(
      "Python build finished successfully!\n"
      "The necessary bits to build these optional modules were not found:\n"
      "_bz2                  _curses               _curses_panel\n"
      "To find the necessary bits, look in setup.py in detect_modules() for the module's name.\n"
      "\nFailed to build these modules:\n_ctypes               zlib\n\n");
  CHECK(old.missing == std::vector<std::string>{"_bz2", "_curses", "_curses_panel"});
  CHECK(old.failed == std::vector<std::string>{"_ctypes", "zlib"});
  CHECK(gilhost::parse_module_problems("make: *** [Makefile:1] Error 1\n").empty());

  const std::vector<std::pair<std::string, std::string>> expected = {
      {"_ssl", "libssl-dev"},         {"_ctypes", "libffi-dev"},     {"zlib", "zlib1g-dev"},
      {"_bz2", "libbz2-dev"},         {"_lzma", "liblzma-dev"},      {"_sqlite3", "libsqlite3-dev"},
      {"readline", "libreadline-dev"}, {"_curses", "libncurses-dev"}, {"_uuid", "uuid-dev"},
      {"_gdbm", "libgdbm-dev"},       {"_dbm", "libgdbm-compat-dev"}, {"_tkinter", "tk-dev"},
      {"_zstd", "libzstd-dev"},       {"_hashlib", "libssl-dev"},    {"_xxtestfuzz", ""}};
  for (const auto& [module, package] : expected) CHECK(gilhost::debian_package_for(module) == package);

  const auto lines = gilhost::describe_module_problems(p);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "modules not built, their libraries' headers were not found: _dbm (libgdbm-compat-dev), "
                    "_gdbm (libgdbm-dev), _tkinter (tk-dev), _zstd (libzstd-dev)");
  CHECK(lines[1] == "modules built but removed, they could not be imported: _ssl (libssl-dev)");
  CHECK(lines[2] ==
        "on Debian/Ubuntu: sudo apt-get install libgdbm-compat-dev libgdbm-dev tk-dev libzstd-dev libssl-dev, then build "
        "again with --force");
  CHECK(gilhost::describe_module_problems({}).empty());
}

TEST_CASE("manifest: JSON round trip, files, and what makes the same build", "[build][manifest]") {
  gilhost::BuildManifest m;
  m.label = "3.14.7t-pydebug";
  m.version = "3.14.7";
  m.free_threaded = true;
  m.source = "/src/python3.14_3.14.7.orig.tar.xz";
  m.source_kind = "tarball";
  m.source_sha256 = std::string(64, 'a');
  m.configure_args = {"--with-pydebug"};
  m.configure_command = {"/tmp/x/configure", "--prefix=/data/pythons/3.14.7t-pydebug", "--enable-shared"};
  m.gilhost_version = "0.1.0";
  m.built_at = "2025-01-02T03:04:05Z";
  m.build_seconds = 245.5;
  m.jobs = 2;
  m.log = "/data/logs/3.14.7t-pydebug-20250102-030405.log";

  const auto back = gilhost::BuildManifest::from_json(nlohmann::json::parse(m.to_json().dump()));
  REQUIRE(back);
  CHECK(back->to_json() == m.to_json());
  CHECK(back->label == m.label);
  CHECK(back->configure_args == m.configure_args);
  CHECK(back->build_seconds == 245.5);

  TempDir tmp;
  gilhost::write_manifest(tmp.str(), m);
  CHECK(fs::exists(tmp / gilhost::kManifestName));
  const auto read = gilhost::read_manifest(tmp.str());
  REQUIRE(read);
  CHECK(read->to_json() == m.to_json());
  CHECK_FALSE(gilhost::read_manifest((tmp / "elsewhere").string()));
  write_file(tmp / gilhost::kManifestName, "{not json");
  CHECK_FALSE(gilhost::read_manifest(tmp.str()));
  CHECK_FALSE(gilhost::BuildManifest::from_json({{"format", 2}, {"label", "x"}}));
  CHECK_FALSE(gilhost::BuildManifest::from_json({{"format", 1}, {"label", 3}}));

  // The same tarball anywhere is the same source; a tree is known by its path.
  gilhost::BuildManifest other = m;
  other.source = "/elsewhere/Python-3.14.7.tar.xz";
  other.built_at = "later";
  CHECK(m.same_build_as(other));
  other.source_sha256 = std::string(64, 'b');
  CHECK_FALSE(m.same_build_as(other));
  other = m;
  other.free_threaded = false;
  CHECK_FALSE(m.same_build_as(other));
  other = m;
  other.configure_args = {"--with-pydebug", "--without-mimalloc"};
  CHECK_FALSE(m.same_build_as(other));
  gilhost::BuildManifest tree = m, tree2 = m;
  tree.source_sha256 = tree2.source_sha256 = "";
  tree.source = tree2.source = "/src/cpython";
  CHECK(tree.same_build_as(tree2));
  tree2.source = "/src/cpython2";
  CHECK_FALSE(tree.same_build_as(tree2));
  CHECK_FALSE(tree.same_build_as(m));
}

TEST_CASE("request: the arguments that make sense together", "[build][request]") {
  using gilhost::BuildCommand;
  auto problem = [](BuildCommand c) { return gilhost::command_problem(c); };
  BuildCommand ok;
  ok.request.source = "Python-3.14.7.tar.xz";
  CHECK(problem(ok).empty());
  ok.request.free_threaded = true;
  ok.request.configure_args = {"--with-pydebug", "LDFLAGS=-L/opt/lib"};
  ok.request.jobs = 4;
  ok.request.label = "mine";
  ok.request.sha256 = std::string(64, 'F');
  ok.request.force = true;
  CHECK(problem(ok).empty());

  BuildCommand c;
  CHECK(problem(c) == "give a SOURCE to build (a tarball, its URL or a CPython source tree), or --list / --remove LABEL");
  c = ok;
  c.request.sha256 = "abc";
  CHECK(problem(c) == "--sha256 takes 64 hex digits, not 'abc'");
  c = ok;
  c.request.label = "a/b";
  CHECK(problem(c).rfind("--label: ", 0) == 0);
  c = ok;
  c.request.jobs = -1;
  CHECK_FALSE(problem(c).empty());
  for (const char* own : {"--prefix=/usr", "--prefix", "--enable-shared", "--disable-shared", "--exec-prefix=/x"}) {
    c = ok;
    c.request.configure_args = {"--with-pydebug", own};
    CHECK(problem(c).find("is set by gilhost build") != std::string::npos);
  }
  c = ok;
  c.request.configure_args = {"--disable-gil"};
  CHECK(problem(c).find("--free-threaded") != std::string::npos);
  c = ok;
  c.json = true;
  CHECK(problem(c) == "--json goes with --list");

  BuildCommand list;
  list.list = true;
  CHECK(problem(list).empty());
  list.json = true;
  CHECK(problem(list).empty());
  list.request.source = "x.tar.xz";
  CHECK(problem(list) == "--list takes no SOURCE");
  list.request.source.clear();
  list.request.force = true;
  CHECK(problem(list) == "--list takes no build options");

  BuildCommand remove;
  remove.remove = "3.14.7t";
  CHECK(problem(remove).empty());
  remove.remove = "../../etc";
  CHECK_FALSE(problem(remove).empty());
  remove.remove = "3.14.7t";
  remove.list = true;
  CHECK(problem(remove) == "give either --list or --remove");
  remove.list = false;
  remove.json = true;
  CHECK(problem(remove) == "--json goes with --list");

  CHECK(gilhost::available_cores() >= 1);
}

TEST_CASE("progress: object files compiled of those the Makefile names", "[build][progress]") {
  const std::string makefile =
      "OBJECT_OBJS=\t\\\n\t\tObjects/abstract.o \\\n\t\tObjects/boolobject.o\n"
      "PARSER_OBJS= Parser/parser.o Parser/peg_api.o\n"
      "Objects/abstract.o: $(srcdir)/Objects/abstract.c\n"  // named twice, counted once
      "%.o: %.c\n\t$(CC) -c $(PY_CORE_CFLAGS) -o $@ $<\n"   // a pattern rule names no file
      "Modules/_abc.o: $(srcdir)/Modules/_abc.c; $(CC) -c -o $@\n"
      "LIBOBJS= $(LIBOBJDIR)x.o\n";
  CHECK(gilhost::count_object_targets(makefile) == 5);
  CHECK(gilhost::count_object_targets("all: python\n") == 0);

  CHECK(gilhost::compiled_object("gcc -pthread -c -fno-strict-overflow -O3 -I./Include -DPy_BUILD_CORE -o "
                                 "Objects/abstract.o ./Objects/abstract.c") == "Objects/abstract.o");
  CHECK(gilhost::compiled_object("gcc -pthread -fPIC -O3 -c ./Modules/_abc.c -o Modules/_abc.o") == "Modules/_abc.o");
  CHECK(gilhost::compiled_object("gcc -pthread -shared Modules/_abc.o -o Modules/_abc.cpython-314t-x86_64-linux-gnu.so") == "");
  CHECK(gilhost::compiled_object("checking for gcc... gcc") == "");

  gilhost::CompileProgress p(4);
  CHECK(p.status().empty());
  p.feed("gcc -c a.c -o a.o");
  p.feed("gcc -c a.c -o a.o");  // the same file again counts once
  p.feed("make[1]: Entering directory");
  CHECK(p.status() == "25% (1/4)");
  for (const char* f : {"b", "c", "d", "e"}) p.feed(std::string("gcc -c x.c -o ") + f + ".o");
  CHECK(p.done() == 5);
  CHECK(p.status().rfind("99% ", 0) == 0);  // never 100% while make runs
  gilhost::CompileProgress unknown(0);
  unknown.feed("gcc -c a.c -o a.o");
  CHECK(unknown.status() == "1 files");
}

TEST_CASE("smoke test: the staged python's answer against what was asked", "[build][smoke]") {
  const auto a = gilhost::parse_smoke_output(
      "some warning\n{\"gilhost_smoke\": 1, \"version\": \"3.14.7\", \"gil_disabled\": true, \"ldlibrary\": \"libpython3.14t.so\"}\n");
  REQUIRE(a);
  CHECK(a->version == "3.14.7");
  CHECK(a->gil_disabled);
  CHECK(a->ldlibrary == "libpython3.14t.so");
  CHECK_FALSE(gilhost::parse_smoke_output("{\"version\": \"3.14.7\"}\n"));
  CHECK_FALSE(gilhost::parse_smoke_output("{\"gilhost_smoke\": 1, \"version\": 3}\n"));
  CHECK_FALSE(gilhost::parse_smoke_output(""));

  TempDir tmp;
  const std::string prefix = tmp.str();
  CHECK(gilhost::smoke_problem(*a, "3.14.7", true, prefix) == "its shared libpython " + prefix + "/lib/libpython3.14t.so is missing");
  write_file(tmp / "lib/libpython3.14t.so.1.0", "ELF");
  fs::create_symlink("libpython3.14t.so.1.0", tmp / "lib/libpython3.14t.so");
  CHECK(gilhost::smoke_problem(*a, "3.14.7", true, prefix).empty());
  CHECK(gilhost::smoke_problem(*a, "3.14.7", false, prefix) == "Py_GIL_DISABLED is 1, a GIL build was asked for");
  CHECK(gilhost::smoke_problem(*a, "3.14.6", true, prefix) == "it says it is Python 3.14.7, the source is 3.14.6");
  gilhost::SmokeAnswer gil = *a;
  gil.gil_disabled = false;
  CHECK(gilhost::smoke_problem(gil, "3.14.7", true, prefix) == "Py_GIL_DISABLED is 0, a free-threaded build was asked for");
  gil.ldlibrary = "libpython3.14.a";
  CHECK(gilhost::smoke_problem(gil, "3.14.7", false, prefix) == "it has no shared libpython (LDLIBRARY is 'libpython3.14.a')");

  const auto env = gilhost::staged_environment({"HOME=/h", "PYTHONPATH=/x", "PYTHONHOME=/y", "LD_LIBRARY_PATH=/z", "PATH=/bin"}, "/s/p");
  CHECK(env == std::vector<std::string>{"HOME=/h", "PATH=/bin", "LD_LIBRARY_PATH=/s/p/lib", "PYTHONHOME=/s/p"});
  CHECK(std::string(gilhost::smoke_source()).find("Py_GIL_DISABLED") != std::string::npos);
}

TEST_CASE("the smoke test's code answers on a real Python", "[build][smoke][python]") {
  const std::string python = gilhost_test::find_on_path("python3");
  if (python.empty()) {
    WARN("no python3 on PATH: the smoke test's code is not run");
    return;
  }
  const gilhost::Captured c = gilhost::run_capture({python, "-c", gilhost::smoke_source()}, 30);
  REQUIRE(c.exit_code == 0);
  const auto a = gilhost::parse_smoke_output(c.out);
  REQUIRE(a);
  const gilhost::Captured v = gilhost::run_capture({python, "-c", "import sys; print(sys.version.split()[0])"}, 30);
  CHECK(a->version + "\n" == v.out);
}

TEST_CASE("store: builds listed, moved into place, replaced and removed", "[build][store]") {
  TempDir tmp;
  const gilhost::BuildStore store((tmp / "gilhost").string());
  CHECK(store.list().empty());

  auto stage = [&](const std::string& name, const std::string& marker) {
    const fs::path dir = tmp / "gilhost/tmp/staging" / name;
    write_file(dir / "bin/python3", marker, true);
    gilhost::BuildManifest m;
    m.label = name;
    m.version = "3.14.7";
    gilhost::write_manifest(dir.string(), m);
    return dir.string();
  };
  store.install(stage("3.14.7t", "first"), "3.14.7t", false);
  CHECK(slurp(tmp / "gilhost/pythons/3.14.7t/bin/python3") == "first");
  CHECK_THROWS(store.install(stage("3.14.7t", "second"), "3.14.7t", false));
  CHECK(slurp(tmp / "gilhost/pythons/3.14.7t/bin/python3") == "first");
  store.install(stage("3.14.7t", "third"), "3.14.7t", true);
  CHECK(slurp(tmp / "gilhost/pythons/3.14.7t/bin/python3") == "third");
  CHECK_FALSE(fs::exists(tmp / "gilhost/tmp/staging/3.14.7t"));  // the replaced build is gone

  fs::create_directories(tmp / "gilhost/pythons/handmade/bin");
  const auto list = store.list();
  REQUIRE(list.size() == 2);
  CHECK(list[0].label == "3.14.7t");
  REQUIRE(list[0].manifest);
  CHECK(list[0].manifest->version == "3.14.7");
  CHECK(list[1].label == "handmade");
  CHECK_FALSE(list[1].manifest);

  CHECK(store.remove("3.14.7t"));
  CHECK_FALSE(fs::exists(tmp / "gilhost/pythons/3.14.7t"));
  CHECK_FALSE(store.remove("3.14.7t"));
  CHECK(entries(tmp / "gilhost/tmp") == std::vector<std::string>{"staging"});  // no leftover of the removal
}

TEST_CASE("data_dir: $XDG_DATA_HOME/gilhost, else ~/.local/share/gilhost; a relative one is ignored", "[build][paths]") {
  ScopedEnv home("HOME", "/home/someone");
  {
    ScopedEnv xdg("XDG_DATA_HOME", "/srv/data/");
    CHECK(gilhost::data_dir() == "/srv/data/gilhost");
    CHECK(gilhost::builds_dir() == "/srv/data/gilhost/pythons");
  }
  {
    ScopedEnv xdg("XDG_DATA_HOME", "relative/data");
    CHECK(gilhost::data_dir() == "/home/someone/.local/share/gilhost");
  }
  ScopedEnv unset("XDG_DATA_HOME", nullptr);
  CHECK(gilhost::data_dir() == "/home/someone/.local/share/gilhost");
}

TEST_CASE("TempDir: made under its parent, removed with its contents", "[build][tempdir]") {
  TempDir tmp;
  std::string path;
  {
    gilhost::TempDir t((tmp / "a/b").string(), "build");
    path = t.path();
    CHECK(fs::path(path).parent_path() == tmp / "a/b");
    CHECK(fs::path(path).filename().string().rfind("build-", 0) == 0);
    write_file(fs::path(path) / "deep/er/file", "x");
    gilhost::TempDir moved = std::move(t);
    CHECK(moved.path() == path);
    CHECK(t.path().empty());
  }
  CHECK_FALSE(fs::exists(path));
  CHECK(entries(tmp / "a/b").empty());
}

TEST_CASE("TempDir::owned: named for this process; remove_orphans takes only those of dead processes", "[build][tempdir]") {
  TempDir tmp;
  const std::string self = std::to_string(::getpid());
  gilhost::TempDir mine = gilhost::TempDir::owned(tmp.str(), "build");
  CHECK(fs::path(mine.path()).filename().string().rfind(self + "-build-", 0) == 0);
  fs::create_directories(tmp / "999999999-build-abcdef/src");  // above any pid_max: no such process
  fs::create_directories(tmp / "1-build-abcdef");                // init: alive (or not ours to judge)
  fs::create_directories(tmp / "staging");
  fs::create_directories(tmp / "-build-x");
  // What else lives beside them: downloads kept under their URL's hash, which can be all digits (a CI run
  // lost its download so), and folders of other shapes.
  write_file(tmp / "21686766-python3.14_3.14.7.orig.tar.gz", "tarball");
  write_file(tmp / "21686766-python3.14_3.14.7.orig.tar.gz.sha256", "sum");
  write_file(tmp / "999999999-file-abcdef", "a file, not a folder owned() made");
  fs::create_directories(tmp / "999999999-Build-abcdef");
  fs::create_directories(tmp / "999999999-build-abcdefg");
  gilhost::TempDir::remove_orphans(tmp.str());
  std::vector<std::string> kept{"-build-x", "1-build-abcdef", "21686766-python3.14_3.14.7.orig.tar.gz",
                                "21686766-python3.14_3.14.7.orig.tar.gz.sha256", fs::path(mine.path()).filename().string(),
                                "999999999-Build-abcdef", "999999999-build-abcdefg", "999999999-file-abcdef", "staging"};
  std::sort(kept.begin(), kept.end());
  CHECK(entries(tmp.path()) == kept);
  gilhost::TempDir::remove_orphans((tmp / "missing").string());  // nothing there: nothing to do
}

TEST_CASE("run_process: output, cwd, environment, exit status, and an interrupt that kills the group", "[build][process]") {
  TempDir tmp;
  std::string out, err;
  auto sink = [&](int stream, std::string_view d) { (stream == 1 ? out : err).append(d); };
  gilhost::ProcessOptions o;
  o.cwd = tmp.str();
  o.env = std::vector<std::string>{"GREETING=hello", "PATH=/usr/bin:/bin"};
  auto r = gilhost::run_process({"sh", "-c", "echo $GREETING; pwd; echo oops >&2; exit 3"}, o, sink);
  CHECK(r.exit_code == 3);
  CHECK(out == "hello\n" + fs::canonical(tmp.path()).string() + "\n");
  CHECK(err == "oops\n");

  out.clear();
  err.clear();
  o.merge_stderr = true;
  r = gilhost::run_process({"sh", "-c", "echo one; echo two >&2; kill -TERM $$"}, o, sink);
  CHECK(r.exit_code == -1);
  CHECK(r.signal == SIGTERM);
  CHECK(out == "one\ntwo\n");
  CHECK(err.empty());

  CHECK(gilhost::run_process({"/nonexistent/program"}, {}, sink).exit_code == 127);

  // A grandchild that keeps the pipe open does not hold us past the child's exit.
  const auto start = std::chrono::steady_clock::now();
  r = gilhost::run_process({"sh", "-c", "sleep 5 & echo started"}, {}, sink);
  CHECK(r.exit_code == 0);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(4));

  // An interrupt kills the whole process group (the grandchild too) and says so.
  std::atomic<int> interrupt{0};
  gilhost::ProcessOptions io;
  io.interrupt = &interrupt;
  const fs::path pid_file = tmp / "pid";
  std::thread stopper([&] {
    for (int i = 0; i < 500 && !fs::exists(pid_file); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    interrupt = SIGINT;
  });
  r = gilhost::run_process({"sh", "-c", "sleep 30 & echo $! > '" + pid_file.string() + "'; wait"}, io, sink);
  stopper.join();
  CHECK(r.interrupted);
  CHECK(r.exit_code == -1);
  REQUIRE(fs::exists(pid_file));
  CHECK(gilhost_test::process_gone(std::stoi(slurp(pid_file))));

  r = gilhost::run_process({"sleep", "10"}, [] {
    gilhost::ProcessOptions t;
    t.timeout_s = 0.2;
    return t;
  }(), sink);
  CHECK(r.timed_out);
}

TEST_CASE("StepRunner: the step's output into the log, its last lines kept", "[build][steps]") {
  TempDir tmp;
  const std::string log = (tmp / "build.log").string();
  std::FILE* progress = std::tmpfile();
  REQUIRE(progress);
  gilhost::StepRunner steps(log, 2, false, progress);
  std::vector<std::string> seen;
  const auto ok = steps.run("configure", {"sh", "-c", "for i in $(seq 1 30); do echo line $i; done; printf 'no newline'"}, {},
                            [&](const std::string& line) {
                              seen.push_back(line);
                              return std::string();
                            });
  CHECK(ok.ok());
  CHECK(seen.size() == 31);
  REQUIRE(ok.tail.size() == gilhost::StepRunner::kTailLines);
  CHECK(ok.tail.front() == "line 12");
  CHECK(ok.tail.back() == "no newline");

  const auto failed = steps.run("compile", {"sh", "-c", "echo 'error: it broke' >&2; exit 2"}, {});
  CHECK_FALSE(failed.ok());
  CHECK(failed.how_it_ended() == "exited with status 2");
  CHECK(failed.tail == std::deque<std::string>{"error: it broke"});

  // Not a terminal: one line per step.
  std::rewind(progress);
  char buf[256] = {};
  CHECK(std::fread(buf, 1, sizeof buf - 1, progress) > 0);
  std::fclose(progress);
  CHECK(std::string(buf) == "gilhost: [1/2] configure: sh\ngilhost: [2/2] compile: sh\n");

  const std::string text = slurp(log);
  CHECK(text.find("==> [1/2] configure: sh -c ") != std::string::npos);
  CHECK(text.find("line 30\nno newline\n") != std::string::npos);
  CHECK(text.find("==> [2/2] compile: sh -c ") != std::string::npos);
  CHECK(text.find("error: it broke\n==> compile exited with status 2") != std::string::npos);
}

TEST_CASE("StepRunner on a terminal: one line redrawn with the step's status, ended by its outcome", "[build][steps]") {
  TempDir tmp;
  std::FILE* progress = std::tmpfile();
  REQUIRE(progress);
  gilhost::StepRunner steps((tmp / "build.log").string(), 1, true, progress);
  gilhost::CompileProgress compile(2);
  const auto outcome = steps.run("compile", {"sh", "-c", "echo 'gcc -c a.c -o a.o'"}, {}, [&](const std::string& line) {
    compile.feed(line);
    return compile.status();
  });
  CHECK(outcome.ok());
  std::rewind(progress);
  char buf[512] = {};
  CHECK(std::fread(buf, 1, sizeof buf - 1, progress) > 0);
  std::fclose(progress);
  const std::string shown = buf;
  CHECK(shown.rfind("\r\033[K[1/1] compile (0s)", 0) == 0);
  CHECK(shown.find("\r\033[K[1/1] compile 50% (1/2) (0s)") != std::string::npos);
  const std::string last = "\r\033[K[1/1] compile done (0s)\n";
  REQUIRE(shown.size() > last.size());
  CHECK(shown.substr(shown.size() - last.size()) == last);
}
