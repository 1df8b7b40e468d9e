#pragma once
// Identities that must not collide across machines and sessions (a results file's session id).
#include <string>

namespace gilhost {

// 128 random bits from the kernel (getrandom), as 32 lowercase hex digits; throws std::system_error.
std::string random_hex_id();
// True for what random_hex_id makes (what a reader accepts as a session id).
bool is_hex_id(const std::string& text);

}  // namespace gilhost
