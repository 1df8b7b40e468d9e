#include "runner/gil_offset_cache.hpp"

#include <elf.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>

#include "util/checksum.hpp"
#include "util/fd.hpp"
#include "util/paths.hpp"

namespace gilhost {

namespace {
constexpr const char* kGilOffsetMagic = "gilhost-gil-offset 1";

std::string body(const std::string& identity, const GilOffset& offset) {
  std::string text = std::string(kGilOffsetMagic) + "\n" + identity + "\n";
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
  char real[PATH_MAX];
  struct stat st {};
  if (!::realpath(path.c_str(), real) || ::stat(real, &st) != 0) return std::nullopt;
  LibraryIdentity out;
  out.real_path = real;
  out.key = out.real_path + " dev=" + std::to_string(st.st_dev) + " ino=" + std::to_string(st.st_ino) +
         " size=" + std::to_string(st.st_size) + " mtime=" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec) + " glibc=" + ::gnu_get_libc_version();
  return out;
}

std::string gil_offset_key(const LibraryIdentity& id, std::optional<bool> gil_on) {
  return id.key + (gil_on ? (*gil_on ? " gil=on" : " gil=off") : "");
}

std::string gil_offset_cache_path(const std::string& dir, const std::string& identity) {
  return (std::filesystem::path(dir) / ("gil-" + hex64(fnv1a64(identity)) + ".offset")).string();
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
  const std::string head = std::string(kGilOffsetMagic) + "\n" + identity + "\n";
  if (text.size() <= head.size() || text.compare(0, head.size(), head) != 0) return std::nullopt;
  std::optional<GilOffset> out = parse_line(text.substr(head.size(), text.size() - head.size() - 1));
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
  try {
    ensure_private_dir(std::filesystem::path(path).parent_path().string());
    write_file_atomic(path, encode_gil_offset(identity, offset));
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

bool in_writable_segment(std::uintptr_t base, std::uint64_t offset, std::uint64_t size) {
  if (offset > UINT64_MAX - size) return false;
  SegmentQuery q{base, offset, offset + size, false};
  ::dl_iterate_phdr(check_segments, &q);
  return q.found;
}

}  // namespace gilhost
