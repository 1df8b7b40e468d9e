#pragma once
// The pieces of perf_event_open that the exact recorder (measure/exact_recorder) and the switch watch
// (measure/switch_watch) share: the system call, a ring buffer mapped from an event, and what to tell a
// user when the kernel says no.
#include <linux/perf_event.h>
#include <sys/types.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace gilhost {

int perf_event_open(perf_event_attr& attr, pid_t pid, int cpu, int group, unsigned long flags);
// Why perf_event_open failed with `err`, in words a user can act on (the paranoid level, what allows it).
std::string perf_open_failure(int err, const std::string& needs);

// A field of a record at byte `at`: records are packed, so a field may not be aligned.
template <typename T>
T record_field(const unsigned char* record, std::size_t at) {
  T v;
  std::memcpy(&v, record + at, sizeof v);
  return v;
}

// A perf ring buffer: one metadata page and 2^n data pages, unmapped when done.
class PerfRing {
 public:
  PerfRing() = default;
  PerfRing(void* base, std::size_t length) : base_(base), length_(length) {}
  PerfRing(PerfRing&& o) noexcept : base_(std::exchange(o.base_, nullptr)), length_(o.length_) {}
  PerfRing& operator=(PerfRing&& o) noexcept {
    if (this != &o) {
      unmap();
      base_ = std::exchange(o.base_, nullptr);
      length_ = o.length_;
    }
    return *this;
  }
  PerfRing(const PerfRing&) = delete;
  PerfRing& operator=(const PerfRing&) = delete;
  ~PerfRing() { unmap(); }
  bool mapped() const { return base_ != nullptr; }

  // Calls `take(record, size)` for each whole record written since the last read, then frees them.
  template <typename Take>
  void read(std::vector<unsigned char>& scratch, Take&& take) {
    auto* meta = static_cast<perf_event_mmap_page*>(base_);
    const std::uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
    std::uint64_t tail = meta->data_tail;
    const auto* data = static_cast<const unsigned char*>(base_) + meta->data_offset;
    const std::uint64_t size = meta->data_size;
    while (tail + sizeof(perf_event_header) <= head) {
      perf_event_header h{};
      copy_out(data, size, tail, &h, sizeof h);
      if (h.size < sizeof h || tail + h.size > head) break;
      scratch.resize(h.size);
      copy_out(data, size, tail, scratch.data(), h.size);
      take(scratch.data(), static_cast<std::size_t>(h.size));
      tail += h.size;
    }
    __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
  }

 private:
  static void copy_out(const unsigned char* data, std::uint64_t size, std::uint64_t at, void* to, std::size_t n) {
    const std::uint64_t from = at % size;
    const std::size_t first = static_cast<std::size_t>(std::min<std::uint64_t>(n, size - from));
    std::memcpy(to, data + from, first);
    std::memcpy(static_cast<unsigned char*>(to) + first, data, n - first);
  }
  void unmap();
  void* base_ = nullptr;
  std::size_t length_ = 0;
};

// The largest buffer the kernel lets us lock for event `fd`, from `max_bytes` of data down to 16 KiB.
PerfRing map_perf_ring(int fd, std::size_t max_bytes, std::string& why_not);

}  // namespace gilhost
