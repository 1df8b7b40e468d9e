#pragma once
// The runner↔host protocol on the wire: each event is one JSON object on one line, named by its "event"
// key. Both C++ producers (runner_main, subinterpreters) encode here; the Python bootstrap writes the
// `case` event of exec mode itself, in this same format (tests/unit/test_protocol.cpp runs it). gilhost
// decodes every line here, strictly: a known event with a field of the wrong type is no event.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "protocol/events.hpp"

namespace gilhost::protocol {

// Who sent an event: the sender's pid as it wrote, and the token gilhost gave the runner for this run
// (--token, or the bootstrap's _spec in exec mode), which no other writer to the channel knows.
struct Envelope {
  std::int64_t pid = 0;
  std::string token;
};

// One line, without its newline. Strings that are not UTF-8 are written with U+FFFD in their place.
std::string encode(const Event& event);
// The same, with who sent it ("pid", "token"): what the runner writes. Its events of every run are
// written member by member (protocol/flat_encode), the rest as a document (encode_as_document): the same text.
std::string encode(const Event& event, const Envelope& from);
std::string encode_as_document(const Event& event, const Envelope& from);

// The longest line gilhost takes as one event, newline excluded. The runner's own events are far smaller
// except a case event, which carries the case's result, metrics and marks: 16 MiB leaves them room (a
// result that size belongs in a file the case writes), while a script writing to the channel without a
// newline costs gilhost at most this much memory. A longer line is dropped as unreadable (EventLog).
inline constexpr std::size_t kMaxEventLine = std::size_t{16} << 20;

struct Decoded {
  std::optional<Event> event;
  std::string error;  // why the line is no event, when `event` is empty
  Envelope from;      // as the line says (0 and "" where it does not)
};
Decoded decode(const std::string& line);

// The outcome the bootstrap's _finish() returns (a JSON object), or nullopt with `error` set.
std::optional<Outcome> decode_outcome(const std::string& text, std::string& error);

// The JSON the run records keep of these (the same shape as on the wire).
void to_json(nlohmann::json& j, const CpuDelta& cpu);
void to_json(nlohmann::json& j, const CaseError& error);
void to_json(nlohmann::json& j, const Mark& mark);
void to_json(nlohmann::json& j, const Outcome& outcome);
void to_json(nlohmann::json& j, const InterpreterOutcome& one);

}  // namespace gilhost::protocol
