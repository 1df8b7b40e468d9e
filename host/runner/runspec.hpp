#pragma once
// What the orchestrator tells the runner child about one measured run (passed as JSON on its argv).
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/gil_offset_cache.hpp"

namespace gilhost {

struct RunnerSpec {
  std::string libpython;   // shared libpython to dlopen
  std::string executable;  // the interpreter: program name, sys.executable
  std::string script;      // absolute path; empty when `module` names what runs
  std::string module;      // a module on sys.path: imported (call) or run as `python -m` runs it (main)
  std::string mode;        // "call" or "main"
  std::string function;    // call mode
  std::string setup;       // call mode: called before the clock with the same kwargs ("" none)
  nlohmann::json kwargs = nlohmann::json::object();
  std::vector<std::string> argv;
  int subinterpreters = 0;  // 0: run in the main interpreter
  std::string gil = "own";  // subinterpreters: "own" or "shared"
  bool free_threaded = false;  // a Py_GIL_DISABLED build: what subinterpreter configs it accepts, GIL watching
  std::string bootstrap_cache_dir;  // the runner's per-build caches (compiled bootstrap, GIL offset); empty: none
  // The build's cached GIL offsets, read by the orchestrator once per cell: the run reads no file for them.
  std::vector<HandedGilOffset> gil_offsets;
  bool locate_gil = true;  // say where each interpreter's GIL lives (runner/gil_locator): thread states are on
  // gilhost's token for this run, which every event of the runner carries (protocol::Envelope): on the
  // runner's command line (--token), in exec mode in the bootstrap's spec; never in to_json().
  std::string token;

  // As it travels on the runner's command line. `kwargs` keep their NaNs and infinities, which JSON text
  // cannot hold (nlohmann writes null): each goes as {"$float": "nan" | "inf" | "-inf"}, and an object key
  // of the case's own that starts with '$' gets a second '$', so no table of the user's reads as one.
  nlohmann::json to_json() const;
  // to_json()'s text read back (util/json_reader: no nlohmann parser in a run's start); std::runtime_error
  // saying what is wrong otherwise.
  static RunnerSpec from_text(std::string_view text);
  // The `_spec` dict the Python bootstrap reads.
  nlohmann::json python_spec(int index) const;
};

}  // namespace gilhost
