#pragma once
// Where gilhost keeps things (XDG base directories).
#include <sys/types.h>

#include <optional>
#include <string>

#include "util/private_files.hpp"  // the caches' folders and files, kept apart for the runner

namespace gilhost {

// HOME is $HOME, else the password database's home; a user without one gets /tmp/gilhost-UID (0700, its
// own), never a folder other users share.
// What it can rebuild: $XDG_CACHE_HOME/gilhost, else ~/.cache/gilhost.
std::string cache_dir();
// What it made and keeps (gilhost build's Pythons and logs): $XDG_DATA_HOME/gilhost, else
// ~/.local/share/gilhost. A relative $XDG_DATA_HOME is ignored, as the XDG specification says: a
// build's prefix is compiled into it and must not depend on the current folder.
std::string data_dir();
// The builds of `gilhost build`, one folder per label: data_dir()/pythons.
std::string builds_dir();
// A program that ships with gilhost (gilhost-runner, gilhost-load): beside the running gilhost (a build
// tree), else in ../libexec/gilhost (an installed prefix: `cmake --install`, the .deb). The first that
// is executable; the one beside gilhost when neither is.
std::string companion_program(const std::string& name);
// The program a process runs (/proc/PID/exe); "" when it has ended or cannot be read.
std::string proc_exe(pid_t pid);

}  // namespace gilhost
