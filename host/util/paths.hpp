#pragma once
// Where gilhost keeps things (XDG base directories).
#include <sys/types.h>

#include <optional>
#include <string>

#include "util/fd.hpp"

namespace gilhost {

// `dir`/`name`, and the folder a path is in ("" for a bare name, "/" at the root), as std::filesystem
// would say them for these plain paths. Plain string work: a run's path through the caches must not touch
// std::filesystem, whose code a fresh runner would fault in (~45 us a run; docs/performance.md).
std::string path_join(const std::string& dir, const std::string& name);
std::string parent_folder(const std::string& path);

// HOME is $HOME, else the password database's home; a user without one gets /tmp/gilhost-UID (0700, its
// own), never a folder other users share.
// What it can rebuild: $XDG_CACHE_HOME/gilhost, else ~/.cache/gilhost.
std::string cache_dir();
// What it made and keeps (gilhost build's Pythons and logs): $XDG_DATA_HOME/gilhost, else
// ~/.local/share/gilhost. A relative $XDG_DATA_HOME is ignored, as the XDG specification says: a
// build's prefix is compiled into it and must not depend on the current folder.
std::string data_dir();
// Makes `dir` (mode 0700) when missing; throws std::runtime_error unless it is a folder of this user's
// that no one else may write (as XDG asks of its folders). Caches are written only into such a folder.
void ensure_private_dir(const std::string& dir);
// The contents of `path` when it is a regular file of this user's, in a folder of this user's, that no
// one else may write; opened without following a link or waiting on a FIFO. nullopt otherwise: a cache
// that is not safely ours is not trusted, only rebuilt.
std::optional<std::string> read_private_file(const std::string& path);
// The same checks, the file left open for the caller (util/mapped_file): its size in `size`; an invalid
// descriptor when it is not safely ours.
UniqueFd open_private_file(const std::string& path, std::size_t& size);
// The builds of `gilhost build`, one folder per label: data_dir()/pythons.
std::string builds_dir();
// A program that ships with gilhost (gilhost-runner, gilhost-load): beside the running gilhost (a build
// tree), else in ../libexec/gilhost (an installed prefix: `cmake --install`, the .deb). The first that
// is executable; the one beside gilhost when neither is.
std::string companion_program(const std::string& name);
// The program a process runs (/proc/PID/exe); "" when it has ended or cannot be read.
std::string proc_exe(pid_t pid);

}  // namespace gilhost
