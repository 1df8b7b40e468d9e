#pragma once
// The runner's four events of every run (ready, gil, an embedded case, finalized) written member by member,
// without a JSON document: the first nlohmann document a runner built and dumped cost it ~90 us a run on a
// slow VM, most of what its events cost. The text is byte for byte what codec's encode writes (keys in
// the same sorted order); an event this writer does not take, or a text that would need escaping, is
// nullopt, and codec writes it.
#include <optional>
#include <string>

#include "protocol/codec.hpp"

namespace gilhost::protocol {

std::optional<std::string> flat_line(const Event& event, const Envelope& from);

}  // namespace gilhost::protocol
