#pragma once
// The folders and files gilhost keeps its caches in, and the checks that they are this user's alone.
// Apart from util/paths (XDG folders, companion programs) and free of std::filesystem and iostreams:
// the runner links this, and a program that carries their code (half a megabyte of static libstdc++)
// starts slower, even when it never calls it (docs/performance.md).
#include <cstddef>
#include <optional>
#include <string>

#include "util/fd.hpp"

namespace gilhost {

// `dir`/`name`, and the folder a path is in ("" for a bare name, "/" at the root), as std::filesystem
// would say them for these plain paths. Plain string work: a run's path through the caches must not touch
// std::filesystem, whose code a fresh runner would fault in (~45 us a run; docs/performance.md).
std::string path_join(const std::string& dir, const std::string& name);
std::string parent_folder(const std::string& path);

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

}  // namespace gilhost
