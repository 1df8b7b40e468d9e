#pragma once
// Labels of gilhost's own builds: the folder name under DATA/pythons, what --remove takes.
#include <string>
#include <vector>

namespace gilhost {

// "3.14.7", "3.14.7t"; extra configure arguments add a suffix: a word per flag where each is a plain
// --with-X/--enable-X (X) or --without-X/--disable-X (noX) ("3.14.7t-pydebug", "3.14.7-nomimalloc"),
// else a short hash of them all ("3.14.7-1a2b3c4d").
std::string derive_label(const std::string& version, bool free_threaded, const std::vector<std::string>& configure_args);

// Empty when `name` can be a label (a folder name: letters, digits and . _ + -, not starting with . or -,
// at most 64 characters), else why not.
std::string label_problem(const std::string& name);

}  // namespace gilhost
