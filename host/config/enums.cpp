#include "config/enums.hpp"

namespace gilhost {

const char* to_string(CaseMode mode) { return mode == CaseMode::main ? "main" : "call"; }

const char* to_string(SubinterpreterGil gil) { return gil == SubinterpreterGil::shared ? "shared" : "own"; }

std::optional<SubinterpreterGil> parse_subinterpreter_gil(std::string_view word) {
  if (word == "own") return SubinterpreterGil::own;
  if (word == "shared") return SubinterpreterGil::shared;
  return std::nullopt;
}

const char* op_symbol(CompareOp op) {
  switch (op) {
    case CompareOp::eq: return "==";
    case CompareOp::ne: return "!=";
    case CompareOp::lt: return "<";
    case CompareOp::le: return "<=";
    case CompareOp::gt: return ">";
    case CompareOp::ge: return ">=";
  }
  return "?";
}

bool is_ordering(CompareOp op) { return op != CompareOp::eq && op != CompareOp::ne; }

}  // namespace gilhost
