#include "runner/gil_offset_cache.hpp"

#include <elf.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "util/checksum.hpp"
#include "util/fd.hpp"
#include "util/private_files.hpp"

namespace gilhost {

namespace {
// 2: the identity without the real path, which is kept in an object line of its own.
constexpr const char* kGilOffsetMagic = "gilhost-gil-offset 2";

std::string body(const std::string& identity, const GilOffset& offset) {
  std::string text = std::string(kGilOffsetMagic) + "\n" + identity + "\nobject " + offset.object + "\n";
  if (!offset.has_gil) return text + "nogil\n";
  return text + "gil " + std::to_string(offset.word_offset) + " " + std::to_string(offset.holder_delta) + "\n";
}

// The "gil ..." or "nogil" line.
std::optional<GilOffset> parse_line(const std::string& line) {
  GilOffset out;
  if (line == "nogil") {
    out.has_gil = false;
    return out;
  }
  unsigned long long word = 0;
  long long delta = 0;
  char tail = 0;
  if (std::sscanf(line.c_str(), "gil %llu %lld%c", &word, &delta, &tail) != 2) return std::nullopt;
  out.word_offset = word;
  out.holder_delta = delta;
  return out;
}

struct ObjectQuery {
  std::uintptr_t address = 0;
  std::uintptr_t base = 0;  // the object's first mapped page, once found
};

// The object's image starts at its lowest loadable segment, rounded down to a page (glibc's l_map_start).
int find_object(dl_phdr_info* info, size_t, void* data) {
  auto* q = static_cast<ObjectQuery*>(data);
  static const std::uintptr_t page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  std::uintptr_t first = UINTPTR_MAX;
  bool holds = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    first = std::min<std::uintptr_t>(first, info->dlpi_addr + (ph.p_vaddr & ~(page - 1)));
    const std::uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    if (q->address >= start && q->address - start < ph.p_memsz) holds = true;
  }
  if (!holds) return 0;
  q->base = first;
  return 1;
}

struct SegmentQuery {
  std::uintptr_t base = 0;
  std::uint64_t lo = 0, hi = 0;  // offsets from base
  bool found = false;
};

int check_segments(dl_phdr_info* info, size_t, void* data) {
  auto* q = static_cast<SegmentQuery*>(data);
  if (info->dlpi_addr != q->base) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_W) == 0) continue;
    if (q->lo >= ph.p_vaddr && q->hi <= ph.p_vaddr + ph.p_memsz) q->found = true;
  }
  return q->found ? 1 : 0;
}
}  // namespace

std::optional<LibraryIdentity> library_identity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  LibraryIdentity out;
  out.dev = st.st_dev;
  out.ino = st.st_ino;
  out.key = "dev=" + std::to_string(st.st_dev) + " ino=" + std::to_string(st.st_ino) +
            " size=" + std::to_string(st.st_size) + " mtime=" + std::to_string(st.st_mtim.tv_sec) + "." +
            std::to_string(st.st_mtim.tv_nsec) + " glibc=" + ::gnu_get_libc_version();
  return out;
}

bool names_file(const std::string& path, const LibraryIdentity& id) {
  struct stat st {};
  return !path.empty() && ::stat(path.c_str(), &st) == 0 && st.st_dev == id.dev && st.st_ino == id.ino;
}

bool offset_names_library(const GilOffset& offset, const std::string& libpython, const LibraryIdentity& id) {
  return offset.object == libpython || names_file(offset.object, id);
}

std::string real_path_of(const std::string& path) {
  char real[PATH_MAX];
  return ::realpath(path.c_str(), real) ? std::string(real) : std::string();
}

std::string gil_offset_key(const LibraryIdentity& id, std::optional<bool> gil_on) {
  return id.key + (gil_on ? (*gil_on ? " gil=on" : " gil=off") : "");
}

std::string gil_offset_cache_path(const std::string& dir, const std::string& identity) {
  return path_join(dir, "gil-" + hex64(fnv1a64(identity)) + ".offset");
}

std::string encode_gil_offset(const std::string& identity, const GilOffset& offset) {
  const std::string text = body(identity, offset);
  return text + hex64(fnv1a64(text)) + "\n";
}

std::optional<GilOffset> decode_gil_offset(const std::string& file, const std::string& identity) {
  if (identity.find('\n') != std::string::npos || file.empty() || file.back() != '\n') return std::nullopt;
  const std::size_t sum_at = file.rfind('\n', file.size() - 2);
  if (sum_at == std::string::npos) return std::nullopt;
  const std::string text = file.substr(0, sum_at + 1);
  if (file.substr(sum_at + 1) != hex64(fnv1a64(text)) + "\n") return std::nullopt;
  const std::string head = std::string(kGilOffsetMagic) + "\n" + identity + "\nobject ";
  if (text.size() <= head.size() || text.compare(0, head.size(), head) != 0) return std::nullopt;
  const std::size_t object_end = text.find('\n', head.size());  // text ends with a newline
  std::optional<GilOffset> out = parse_line(text.substr(object_end + 1, text.size() - object_end - 2));
  if (out) out->object = text.substr(head.size(), object_end - head.size());
  // Written by encode_gil_offset only: the same bytes again, or not ours.
  if (out && body(identity, *out) != text) return std::nullopt;
  return out;
}

std::optional<GilOffset> read_gil_offset(const std::string& path, const std::string& identity) {
  try {
    const auto file = read_private_file(path);  // only a file of ours that no one else may write
    return file ? decode_gil_offset(*file, identity) : std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool write_gil_offset(const std::string& path, const std::string& identity, const GilOffset& offset) {
  if (offset.object.find('\n') != std::string::npos) return false;  // one line each: not representable
  try {
    ensure_private_dir(parent_folder(path));
    write_file_atomic(path, encode_gil_offset(identity, offset));
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

std::vector<HandedGilOffset> handed_gil_offsets(const std::string& dir, const std::string& libpython) {
  std::vector<HandedGilOffset> out;
  const std::optional<LibraryIdentity> id = dir.empty() ? std::nullopt : library_identity(libpython);
  if (!id) return out;
  for (const std::optional<bool> gil_on : {std::optional<bool>(), std::optional<bool>(true), std::optional<bool>(false)}) {
    const std::string key = gil_offset_key(*id, gil_on);
    const std::optional<GilOffset> offset = read_gil_offset(gil_offset_cache_path(dir, key), key);
    if (offset && offset_names_library(*offset, libpython, *id)) out.push_back({gil_on, *offset});
  }
  return out;
}

std::uintptr_t object_base_of(const void* address) {
  ObjectQuery q{reinterpret_cast<std::uintptr_t>(address), 0};
  ::dl_iterate_phdr(find_object, &q);
  return q.base;
}

bool in_writable_segment(std::uintptr_t base, std::uint64_t offset, std::uint64_t size) {
  if (offset > UINT64_MAX - size) return false;
  SegmentQuery q{base, offset, offset + size, false};
  ::dl_iterate_phdr(check_segments, &q);
  return q.found;
}

}  // namespace gilhost
