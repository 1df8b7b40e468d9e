#pragma once
// Plain ASCII on a terminal whose locale is not UTF-8 (LC_ALL=C): ✓ ✗ · ± — × … µ and box drawing become
// ok, FAIL, -, +-, -, x, ..., u and -. Files written with -o keep their UTF-8.
#include <memory>
#include <string>
#include <string_view>

namespace gilhost {

// Whether the locale (LC_ALL / LC_CTYPE / LANG, as setlocale reads them) encodes text as UTF-8.
bool locale_is_utf8();

// `text` with each non-ASCII character replaced by its ASCII stand-in ("?" for one without).
std::string to_ascii(std::string_view text);

// From now on, std::cout and std::cerr carry what is written to them with control characters shown
// escaped (util/strings escape_controls: a script's exception message or a hand-made results file never
// sends an escape sequence to the terminal), and to_ascii of it when `ascii`; until the guard is destroyed.
class AsciiTerminal {
 public:
  explicit AsciiTerminal(bool ascii = true);
  void keep_utf8();  // from now on, no ASCII stand-ins (a document on stdout); controls still escaped
  ~AsciiTerminal();
  AsciiTerminal(const AsciiTerminal&) = delete;
  AsciiTerminal& operator=(const AsciiTerminal&) = delete;

 private:
  struct Filters;
  std::unique_ptr<Filters> filters_;
};

}  // namespace gilhost
