#pragma once
// The experiment file's closed sets of words, as types: parsed by the loader, written back as words only
// in the results file's header, the runner's spec and messages.
#include <optional>
#include <string_view>

namespace gilhost {

// How a case runs its script: call one function with the params as keyword arguments (call = "f"), or
// run the script as __main__ with argv (main = true).
enum class CaseMode { call, main };

// The GIL of each subinterpreter a case starts (Py_NewInterpreterFromConfig): one of its own, or the
// main interpreter's, shared.
enum class SubinterpreterGil { own, shared };

// The operator of a `result*` check: result (eq), result_ne, result_lt, result_le, result_gt, result_ge.
enum class CompareOp { eq, ne, lt, le, gt, ge };

const char* to_string(CaseMode mode);         // "call", "main"
const char* to_string(SubinterpreterGil gil);  // "own", "shared"
std::optional<SubinterpreterGil> parse_subinterpreter_gil(std::string_view word);
const char* op_symbol(CompareOp op);  // "==", "!=", "<", ...
// Ordering operators compare numbers only; eq and ne compare any values.
bool is_ordering(CompareOp op);

}  // namespace gilhost
