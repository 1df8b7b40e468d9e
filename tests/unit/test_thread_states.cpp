// measure/thread_states: reading /proc's syscall files, classifying a wait, accounting a thread's time,
// and the sampler on real threads of this process.
#include <catch2/catch.hpp>

#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>

#include "util/clock.hpp"
#include "measure/thread_states.hpp"
#include "syscall_readings.hpp"
#include "protocol/codec.hpp"
#include "results/record_json.hpp"

using gilhost::ProcessGils;
using gilhost::SyscallReading;
using gilhost::ThreadState;
using gilhost_test::in_call;
using gilhost_test::running;

namespace {

const ProcessGils kGilAt1000{true, {{1000, 1256}}};

}  // namespace

TEST_CASE("parse_syscall: running, outside a call, in a call with its arguments", "[thread_states]") {
  CHECK(gilhost::parse_syscall("running\n").kind == SyscallReading::Kind::running);
  CHECK(gilhost::parse_syscall("-1 0x7ffd3587a898 0x7f01a766c2ad\n").kind == SyscallReading::Kind::outside_syscall);
  const SyscallReading r =
      gilhost::parse_syscall("202 0x7f01a74f3048 0x89 0x0 0x7ffd3587a8c0 0x0 0xffffffff 0x7ffd3587a898 0x7f01a766c2ad\n");
  CHECK(r.kind == SyscallReading::Kind::in_syscall);
  CHECK(r.number == 202);
  CHECK(r.arg0 == 0x7f01a74f3048ull);
  CHECK(r.arg1 == 0x89);
  CHECK(gilhost::parse_syscall("").kind == SyscallReading::Kind::unreadable);
}

TEST_CASE("classify_wait: the GIL's futex words, other futexes, sleeps, I/O", "[thread_states]") {
  const std::uint64_t wait_bitset_private = FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG;  // 0x89
  CHECK(gilhost::classify_wait(in_call(SYS_futex, 1040, wait_bitset_private), kGilAt1000) == ThreadState::gil);
  CHECK(gilhost::classify_wait(in_call(SYS_futex, 1255, FUTEX_WAIT_PRIVATE), kGilAt1000) == ThreadState::gil);
  // Just past the window, and a lock's wait with FUTEX_CLOCK_REALTIME (0x189): a lock.
  CHECK(gilhost::classify_wait(in_call(SYS_futex, 1256, wait_bitset_private), kGilAt1000) == ThreadState::lock);
  CHECK(gilhost::classify_wait(in_call(SYS_futex, 5000, 0x189), kGilAt1000) == ThreadState::lock);
  // A futex that wakes others is no wait.
  CHECK(gilhost::classify_wait(in_call(SYS_futex, 1040, FUTEX_WAKE_PRIVATE), kGilAt1000) == ThreadState::other);
  // With no GIL located, a futex wait is a lock wait.
  CHECK(gilhost::classify_wait(in_call(SYS_futex, 1040, wait_bitset_private), ProcessGils{}) == ThreadState::lock);
  CHECK(gilhost::classify_wait(in_call(SYS_clock_nanosleep, 1, 0), kGilAt1000) == ThreadState::sleep);
  CHECK(gilhost::classify_wait(in_call(SYS_nanosleep, 0, 0), kGilAt1000) == ThreadState::sleep);
  // time.sleep before 3.11: select() on no descriptor.
  CHECK(gilhost::classify_wait(in_call(SYS_select, 0, 0), kGilAt1000) == ThreadState::sleep);
  CHECK(gilhost::classify_wait(in_call(SYS_select, 4, 0x7ff0), kGilAt1000) == ThreadState::io);
  CHECK(gilhost::classify_wait(in_call(SYS_ppoll, 0x7ff0, 0), kGilAt1000) == ThreadState::sleep);
  CHECK(gilhost::classify_wait(in_call(SYS_ppoll, 0x7ff0, 2), kGilAt1000) == ThreadState::io);
  CHECK(gilhost::classify_wait(in_call(SYS_read, 0, 0x7ff0), kGilAt1000) == ThreadState::io);
  CHECK(gilhost::classify_wait(in_call(SYS_recvfrom, 5, 0x7ff0), kGilAt1000) == ThreadState::io);
  CHECK(gilhost::classify_wait(in_call(SYS_epoll_wait, 5, 0x7ff0), kGilAt1000) == ThreadState::io);
  CHECK(gilhost::classify_wait(in_call(SYS_wait4, 99, 0), kGilAt1000) == ThreadState::other);
  CHECK(gilhost::classify_wait(running(), kGilAt1000) == ThreadState::other);
}

namespace {

gilhost::ThreadReading reading(std::int64_t t_ms, std::int64_t cpu_ms, SyscallReading s) {
  gilhost::ThreadReading r;
  r.t_ns = t_ms * 1000000;
  r.cpu_ns = cpu_ms * 1000000;
  r.syscall = s;
  return r;
}

gilhost::ThreadObservations one_process(pid_t pid) {
  gilhost::ThreadObservations obs;
  obs.interval_ms = 10;
  obs.root = pid;
  obs.processes[pid] = {true, true};
  return obs;
}

}  // namespace

TEST_CASE("classify_threads: off-CPU time goes to what the thread was seen waiting in", "[thread_states]") {
  gilhost::ThreadObservations obs = one_process(100);
  const SyscallReading gil_wait = in_call(SYS_futex, 1100, FUTEX_WAIT_BITSET_PRIVATE);
  // Thread 101: runs 10 ms, waits for the GIL 30 ms (seen waiting), runs 10 ms, ... Thread 102: sleeps.
  gilhost::ThreadTrack spinner{100, 101, "spin", {}};
  spinner.readings = {reading(0, 0, running()),      reading(10, 10, gil_wait), reading(20, 10, gil_wait),
                      reading(30, 10, gil_wait),     reading(40, 20, running()), reading(50, 20, gil_wait)};
  gilhost::ThreadTrack sleeper{100, 102, "nap", {}};
  sleeper.readings = {reading(0, 0, in_call(SYS_clock_nanosleep, 1, 0)), reading(50, 0, in_call(SYS_clock_nanosleep, 1, 0))};
  gilhost::ThreadTrack helper{100, 103, "gilhost-runner", {}};
  helper.readings = {reading(0, 0, gil_wait), reading(10, 0, gil_wait)};
  obs.threads = {spinner, sleeper, helper};

  const gilhost::ThreadStates s = gilhost::classify_threads(obs, {{true, 1000, 1256}}, "", {103});
  REQUIRE(s.threads.size() == 2);  // the runner's helper is none of the case's
  CHECK(s.gil == "located");
  const gilhost::ThreadTimes& spin = s.threads[0].times;
  CHECK(spin[ThreadState::cpu] == 20000000);
  CHECK(spin[ThreadState::gil] == 30000000);
  CHECK(spin.lived_ns() == 50000000);
  CHECK(s.threads[1].times[ThreadState::sleep] == 50000000);
  CHECK(s.python_totals.lived_ns() == 100000000);
  CHECK(s.gil_wait_share() == Approx(0.3));
  // The timeline: running, waiting for the GIL, running, waiting.
  REQUIRE(s.threads[0].timeline.size() == 4);
  CHECK(s.threads[0].timeline[0].state == ThreadState::cpu);
  CHECK(s.threads[0].timeline[1].state == ThreadState::gil);
  CHECK(s.threads[0].timeline[1].start_ns == 10000000);
  CHECK(s.threads[0].timeline[2].state == ThreadState::cpu);
  CHECK(s.threads[0].timeline[3].state == ThreadState::gil);
}

TEST_CASE("classify_threads: a thread running at both samples keeps the wait it was last seen in", "[thread_states]") {
  gilhost::ThreadObservations obs = one_process(200);
  const SyscallReading gil_wait = in_call(SYS_futex, 1100, FUTEX_WAIT_BITSET_PRIVATE);
  gilhost::ThreadTrack t{200, 201, "t", {}};
  // Seen waiting at 10 ms; running at 20 and 30 ms but on a CPU only 5 of those 10 ms.
  t.readings = {reading(0, 0, running()), reading(10, 5, gil_wait), reading(20, 10, running()), reading(30, 15, running())};
  gilhost::ThreadTrack other{200, 202, "main", {}};
  other.readings = {reading(0, 0, running()), reading(30, 30, running())};
  obs.threads = {t, other};
  const gilhost::ThreadStates s = gilhost::classify_threads(obs, {{true, 1000, 1256}}, "");
  CHECK(s.threads[0].times[ThreadState::gil] == 15000000);
  CHECK(s.threads[0].times[ThreadState::cpu] == 15000000);
}

TEST_CASE("classify_threads: no GIL, an unlocated GIL, a lone thread", "[thread_states]") {
  gilhost::ThreadObservations obs = one_process(300);
  const SyscallReading futex_wait = in_call(SYS_futex, 1100, FUTEX_WAIT_BITSET_PRIVATE);
  gilhost::ThreadTrack a{300, 301, "a", {{reading(0, 0, futex_wait), reading(10, 0, futex_wait)}}};
  gilhost::ThreadTrack b{300, 302, "b", {{reading(0, 0, running()), reading(10, 10, running())}}};
  obs.threads = {a, b};

  const gilhost::ThreadStates none = gilhost::classify_threads(obs, {{false, 0, 0}}, "");
  CHECK(none.gil == "none");
  CHECK(none.threads[0].times[ThreadState::lock] == 10000000);
  CHECK(none.threads[0].gil_located);

  const gilhost::ThreadStates unknown = gilhost::classify_threads(obs, {}, "not located (exec mode)");
  CHECK(unknown.gil == "not located (exec mode)");
  CHECK_FALSE(unknown.threads[0].gil_located);

  // A process of one thread never waits for its own GIL: its futex waits are lock waits, and known so.
  gilhost::ThreadObservations lone = one_process(400);
  lone.processes[400].root_program = false;
  lone.threads = {gilhost::ThreadTrack{400, 400, "worker", {{reading(0, 0, futex_wait), reading(10, 0, futex_wait)}}}};
  const gilhost::ThreadStates s = gilhost::classify_threads(lone, {}, "not located");
  CHECK(s.threads[0].gil_located);
  CHECK(s.threads[0].times[ThreadState::lock] == 10000000);
}

TEST_CASE("classify_threads: a long timeline is coarsened to at most kMaxSegments", "[thread_states]") {
  gilhost::ThreadObservations obs = one_process(500);
  gilhost::ThreadTrack t{500, 501, "flip", {}};
  const SyscallReading gil_wait = in_call(SYS_futex, 1100, FUTEX_WAIT_BITSET_PRIVATE);
  std::int64_t cpu = 0;
  for (int i = 0; i < 10000; ++i) {
    if (i % 2 == 0) cpu += 10;
    t.readings.push_back(reading(10 * i, cpu, i % 2 ? running() : gil_wait));
  }
  obs.threads = {t, gilhost::ThreadTrack{500, 502, "x", {{reading(0, 0, running())}}}};
  const gilhost::ThreadStates s = gilhost::classify_threads(obs, {{true, 1000, 1256}}, "");
  const auto& timeline = s.threads[0].timeline;
  CHECK(timeline.size() <= gilhost::ThreadRecord::kMaxSegments);
  CHECK(timeline.size() > 10);
  for (std::size_t i = 1; i < timeline.size(); ++i) CHECK(timeline[i].start_ns > timeline[i - 1].start_ns);
  // Coarsening keeps the totals exact: they are not read from the timeline.
  CHECK(s.threads[0].times.lived_ns() == 100000000000);  // with the 10 ms it had run at first sight
}

namespace {

// Real threads of this process whose states are known: one blocked reading a pipe, one spinning, and one
// sleeping 50 ms at a time; each has its tid by the time the constructor returns, and all are stopped and
// joined when it goes.
class KnownThreads {
 public:
  KnownThreads() {
    REQUIRE(::pipe(fds_) == 0);
    auto tid = [] { return static_cast<pid_t>(::syscall(SYS_gettid)); };
    sleeper_ = std::thread([&, tid] {
      sleeper_tid = tid();
      while (!stop_) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    });
    reader_ = std::thread([&, tid] {
      reader_tid = tid();
      char c;
      while (::read(fds_[0], &c, 1) < 0) {
      }
    });
    spinner_ = std::thread([&, tid] {
      spinner_tid = tid();
      volatile std::uint64_t x = 0;
      while (!stop_) x = x + 1;
    });
    while (!sleeper_tid || !reader_tid || !spinner_tid) std::this_thread::yield();
  }
  KnownThreads(const KnownThreads&) = delete;
  KnownThreads& operator=(const KnownThreads&) = delete;
  ~KnownThreads() {
    stop_ = true;
    if (::write(fds_[1], "x", 1) != 1) ::close(fds_[1]);  // either wakes the reader
    for (std::thread* t : {&sleeper_, &reader_, &spinner_}) t->join();
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  std::atomic<pid_t> sleeper_tid{0}, reader_tid{0}, spinner_tid{0};

 private:
  int fds_[2] = {-1, -1};
  std::atomic<bool> stop_{false};
  std::thread sleeper_, reader_, spinner_;
};

}  // namespace

TEST_CASE("ThreadStateSampler: real threads of this process sleep, block on a pipe, spin", "[thread_states]") {
  KnownThreads known;
  const pid_t self = ::getpid();
  gilhost::ThreadStateSampler sampler(self, gilhost::monotonic_ns(), 5);
  for (int tick = 0; tick < 60; ++tick) {
    sampler.sample_process(self, 5, tick % 10 == 0);
    sampler.end_tick();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const gilhost::ThreadStates s = gilhost::classify_threads(sampler.take(), {}, "not located");
  auto find = [&](pid_t t) -> const gilhost::ThreadRecord& {
    for (const auto& r : s.threads)
      if (r.tid == t) return r;
    FAIL("thread " << t << " not sampled");
    return s.threads.front();
  };
  const auto& sl = find(known.sleeper_tid).times;
  const auto& rd = find(known.reader_tid).times;
  const auto& sp = find(known.spinner_tid).times;
  CHECK(sl.share(ThreadState::sleep) > 0.8);
  CHECK(rd.share(ThreadState::io) > 0.8);
  CHECK(sp.share(ThreadState::cpu) + sp.share(ThreadState::runqueue) > 0.9);
  CHECK(s.samples == 60);
}

TEST_CASE("GilEvent: encoded and decoded as the runner sends it", "[thread_states][protocol]") {
  gilhost::protocol::GilEvent e;
  e.interpreter = 2;
  e.has_gil = true;
  e.futex_lo = 0x7f0000001000ull;
  e.futex_hi = 0x7f0000001100ull;
  e.helper_tid = 4242;
  const auto d = gilhost::protocol::decode(gilhost::protocol::encode(e));
  REQUIRE(d.event);
  const auto* back = std::get_if<gilhost::protocol::GilEvent>(&*d.event);
  REQUIRE(back);
  CHECK(back->interpreter == 2);
  CHECK(back->has_gil);
  CHECK(back->futex_lo == e.futex_lo);
  CHECK(back->futex_hi == e.futex_hi);
  CHECK(back->helper_tid == 4242);
  CHECK_FALSE(gilhost::protocol::decode(R"({"event":"gil","futex_lo":-5})").event);
}

TEST_CASE("thread_states in a run record: written and read back", "[thread_states][results]") {
  gilhost::RunRecord r;
  r.experiment = "x";
  r.case_name = "c";
  r.interpreter = "3.12.1";
  r.wall_ns = 5;
  gilhost::ThreadStates s;
  s.interval_ms = 10;
  s.samples = 7;
  s.gil = "located";
  gilhost::ThreadRecord t;
  t.pid = 1;
  t.tid = 2;
  t.name = "Thread-1 (spin)";
  t.gil_located = true;
  t.start_ns = 1000;
  t.end_ns = 90000000;
  t.times[ThreadState::gil] = 60000000;
  t.times[ThreadState::cpu] = 30000000;
  t.timeline = {{1000000, ThreadState::cpu}, {11000000, ThreadState::gil}};
  s.threads = {t};
  s.python_totals = t.times;
  r.thread_states = s;
  const nlohmann::json j = gilhost::to_json(r);
  CHECK(j["thread_states"]["gil_wait_share"].get<double>() == Approx(2.0 / 3.0));
  const auto back = std::get<gilhost::RunRecord>(gilhost::line_from_json(j));
  REQUIRE(back.thread_states);
  const gilhost::ThreadRecord& bt = back.thread_states->threads.at(0);
  CHECK(bt.name == "Thread-1 (spin)");
  CHECK(bt.times[ThreadState::gil] == 60000000);
  CHECK(bt.timeline.size() == 2);
  CHECK(bt.timeline[1].state == ThreadState::gil);
  CHECK(bt.timeline[1].start_ns == 11000000);
  CHECK(back.thread_states->gil_wait_share() == Approx(2.0 / 3.0));
  // An older record has none.
  nlohmann::json old = j;
  old.erase("thread_states");
  CHECK_FALSE(std::get<gilhost::RunRecord>(gilhost::line_from_json(old)).thread_states);
  CHECK_FALSE(j.contains("thread_states_sampled"));

  // --thread-states both: the exact states and the sampler's of the same run, each kept as written.
  r.thread_states->method = "exact";
  gilhost::ThreadStates sampled = s;
  sampled.threads[0].times[ThreadState::gil] = 55000000;
  sampled.threads[0].times[ThreadState::runqueue] = 5000000;
  r.thread_states_sampled = sampled;
  const nlohmann::json both = gilhost::to_json(r);
  CHECK(both["thread_states"]["method"] == "exact");
  CHECK(both["thread_states_sampled"]["method"] == "sampled");
  const auto back_both = std::get<gilhost::RunRecord>(gilhost::line_from_json(both));
  REQUIRE(back_both.thread_states_sampled);
  CHECK(back_both.thread_states->threads.at(0).times[ThreadState::gil] == 60000000);
  CHECK(back_both.thread_states_sampled->threads.at(0).times[ThreadState::gil] == 55000000);
  CHECK(back_both.thread_states_sampled->threads.at(0).timeline.size() == 2);
}

TEST_CASE("thread states: every tick at first, then every kStride-th", "[thread_states]") {
  using gilhost::ThreadStateSampler;
  for (long tick = 0; tick < ThreadStateSampler::kFullRateTicks; ++tick) CHECK(ThreadStateSampler::reads_threads_at(tick));
  int read = 0;
  const long from = 300, span = 3000;
  for (long tick = from; tick < from + span; ++tick) read += ThreadStateSampler::reads_threads_at(tick) ? 1 : 0;
  CHECK(read == span / ThreadStateSampler::kStride);
  CHECK_FALSE(ThreadStateSampler::reads_threads_at(ThreadStateSampler::kFullRateTicks * ThreadStateSampler::kStride + 1));
}

namespace {

// How many times the sampler read a real thread of this process that is parked (blocked on a pipe, never
// running), and one that spins, over `ticks` ticks at `interval_ms` as TreeSampler drives it;
// `checkpoints`: every tick carries the process's CPU count.
std::pair<long, long> reads_of_parked_and_running(int interval_ms, long ticks, bool checkpoints) {
  KnownThreads known;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the reader in its read() by now
  const pid_t self = ::getpid();
  gilhost::ThreadStateSampler sampler(self, gilhost::monotonic_ns(), interval_ms);
  for (long tick = 0; tick < ticks; ++tick) {
    if (!sampler.due_at(tick)) continue;
    sampler.begin_tick(tick);
    sampler.sample_process(self, 4, tick == 0, checkpoints ? 0 : -1);
    sampler.end_tick();
  }
  long parked_reads = -1, running_reads = -1;
  for (const auto& t : sampler.take().threads) {
    if (t.tid == known.reader_tid) parked_reads = t.reads;
    if (t.tid == known.spinner_tid) running_reads = t.reads;
  }
  return {parked_reads, running_reads};
}

}  // namespace

TEST_CASE("thread states: a parked thread is read at the default interval's cadence, however short the interval",
          "[thread_states]") {
  using gilhost::ThreadStateSampler;
  const long ticks = ThreadStateSampler::kFullRateTicks + 600;
  const long due = ThreadStateSampler::kFullRateTicks + 600 / ThreadStateSampler::kStride;  // ticks reading threads
  SECTION("at 1 ms: every 30th tick once past the first ticks; the running thread at every tick due") {
    const auto [parked, running] = reads_of_parked_and_running(1, ticks, false);
    CHECK(running >= due / 2);  // all, on a quiet machine; a spinner queued behind other work looks parked
    CHECK(parked >= ThreadStateSampler::kFullRateTicks + 600 / 30);
    CHECK(parked <= ThreadStateSampler::kFullRateTicks + 600 / 30 + 2);
  }
  SECTION("at the default 10 ms: every tick due, as before") {
    const auto [parked, running] = reads_of_parked_and_running(10, ticks, false);
    CHECK(running >= due / 2);  // all, on a quiet machine; a spinner queued behind other work looks parked
    CHECK(parked == due);
  }
  SECTION("at a tick that checks the process's CPU count, every thread is read") {
    const auto [parked, running] = reads_of_parked_and_running(1, ticks, true);
    CHECK(running >= due / 2);  // all, on a quiet machine; a spinner queued behind other work looks parked
    CHECK(parked == due);
  }
  CHECK(ThreadStateSampler::parked_stride(1) == 30);
  CHECK(ThreadStateSampler::parked_stride(7) == 5);
  CHECK(ThreadStateSampler::parked_stride(10) == ThreadStateSampler::kStride);
  CHECK(ThreadStateSampler::parked_stride(100) == ThreadStateSampler::kStride);
}

namespace {

// A child process parked in a pipe read, for as long as this lives.
struct ParkedChild {
  int fds[2] = {-1, -1};
  pid_t pid = -1;
  ParkedChild() {
    if (::pipe(fds) != 0) return;
    pid = ::fork();
    if (pid == 0) {
      char c;
      ::_exit(::read(fds[0], &c, 1) == 1 ? 0 : 1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // in its read
  }
  ~ParkedChild() {
    if (pid > 0 && ::write(fds[1], "x", 1) == 1) ::waitpid(pid, nullptr, 0);
    ::close(fds[0]);
    ::close(fds[1]);
  }
};

}  // namespace

// At 1 ms the ticks due to read the threads come every 3rd tick, and a parked thread is read every 30th:
// while the tree is idle, the due ticks between cost a pass over every thread for nothing.
TEST_CASE("thread states: idle ticks with every thread parked read nothing until one is due; the tree running ends that",
          "[thread_states]") {
  using gilhost::ThreadStateSampler;
  ParkedChild child;
  REQUIRE(child.pid > 0);
  ThreadStateSampler sampler(child.pid, gilhost::monotonic_ns(), 1);
  long tick = 0, reads_while_idle = 0, ticks_read = 0;
  auto read_tick = [&](bool idle) {
    sampler.begin_tick(tick, idle);
    sampler.sample_process(child.pid, 1, tick == 0);
    sampler.end_tick();
    ++ticks_read;
  };
  for (; tick < ThreadStateSampler::kFullRateTicks; ++tick) read_tick(false);
  const long idle_from = tick, idle_span = 300;
  for (; tick < idle_from + idle_span; ++tick) {
    if (!sampler.due_while_idle(tick)) continue;
    read_tick(true);
    ++reads_while_idle;
  }
  // Every 30th tick (the parked stride at 1 ms), not every 3rd.
  CHECK(reads_while_idle >= idle_span / ThreadStateSampler::parked_stride(1));
  CHECK(reads_while_idle <= idle_span / ThreadStateSampler::parked_stride(1) + 1);
  long next_due = tick;
  while (!sampler.due_at(next_due)) ++next_due;
  CHECK_FALSE(sampler.due_while_idle(next_due));  // its reading is later
  sampler.tree_ran();
  CHECK(sampler.due_while_idle(next_due));
  const auto threads = sampler.take().threads;
  REQUIRE(threads.size() == 1);
  // Every pass read the thread, but the first idle one: the tree had run before it, so it looked.
  CHECK(threads[0].reads >= ticks_read - 1);
}

namespace {

gilhost::ThreadReading reading_us(std::int64_t t_us, std::int64_t cpu_us, std::int64_t delay_us, SyscallReading s) {
  gilhost::ThreadReading r;
  r.t_ns = t_us * 1000;
  r.cpu_ns = cpu_us * 1000;
  r.delay_ns = delay_us * 1000;
  r.syscall = s;
  return r;
}

// The thread's time per state as its timeline draws it: each segment until the next one's start or its end.
gilhost::ThreadTimes timeline_times(const gilhost::ThreadRecord& t) {
  gilhost::ThreadTimes out;
  for (std::size_t i = 0; i < t.timeline.size(); ++i) {
    const std::int64_t end = i + 1 < t.timeline.size() ? t.timeline[i + 1].start_ns : t.end_ns;
    out[t.timeline[i].state] += end - t.timeline[i].start_ns;
  }
  return out;
}

}  // namespace

TEST_CASE("classify_threads: a queued thread's lagging counters are corrected in the timeline too", "[thread_states]") {
  // Issue 27's sha256 threads on 3.14t: 4 runnable threads on 2 cores, never blocked. A thread queued at
  // a reading has its current wait for a core not yet in run_delay, so the interval looks 6 ms off the
  // CPU; the next reading's counters hold those 6 ms as run-queue time.
  gilhost::ThreadObservations obs = one_process(600);
  gilhost::ThreadTrack t{600, 601, "sha", {}};
  t.readings = {reading_us(0, 0, 0, running()),          reading_us(10000, 4000, 0, running()),
                reading_us(20000, 8000, 12000, running()), reading_us(30000, 13000, 17000, running())};
  obs.threads = {t, gilhost::ThreadTrack{600, 602, "main", {{reading_us(0, 0, 0, running())}}}};
  const gilhost::ThreadStates s = gilhost::classify_threads(obs, {{false, 0, 0}}, "");
  const gilhost::ThreadRecord& rec = s.threads[0];
  CHECK(rec.times[ThreadState::other] == 0);
  CHECK(rec.times[ThreadState::cpu] == 13000000);
  CHECK(rec.times[ThreadState::runqueue] == 17000000);
  // The first interval is drawn as what the second reading showed it was, not as a wait.
  for (const auto& seg : rec.timeline) CHECK(seg.state != ThreadState::other);
  const gilhost::ThreadTimes drawn = timeline_times(rec);
  for (ThreadState st : gilhost::kThreadStates) CHECK(drawn[st] == rec.times[st]);
}

TEST_CASE("classify_threads: the timeline holds each interval's states in proportion", "[thread_states]") {
  // A GIL waiter: 2.5 ms on a CPU in each 10 ms, the rest waiting for the GIL. Drawn by the state that
  // covered most of each interval, its timeline would say 100 % GIL where the totals say 75 %.
  gilhost::ThreadObservations obs = one_process(700);
  const SyscallReading gil_wait = in_call(SYS_futex, 1100, FUTEX_WAIT_BITSET_PRIVATE);
  gilhost::ThreadTrack t{700, 701, "waiter", {}};
  for (int i = 0; i <= 40; ++i) t.readings.push_back(reading_us(10000 * i, 2500 * i, 300 * i, i % 3 ? gil_wait : running()));
  obs.threads = {t, gilhost::ThreadTrack{700, 702, "main", {{reading_us(0, 0, 0, running())}}}};
  const gilhost::ThreadStates s = gilhost::classify_threads(obs, {{true, 1000, 1256}}, "");
  const gilhost::ThreadRecord& rec = s.threads[0];
  CHECK(rec.times.share(ThreadState::gil) == Approx(0.72).margin(0.001));
  const gilhost::ThreadTimes drawn = timeline_times(rec);
  for (ThreadState st : gilhost::kThreadStates) CHECK(std::llabs(drawn[st] - rec.times[st]) <= 1000);
}

TEST_CASE("classify_threads: a coarsened timeline still agrees with the totals", "[thread_states]") {
  gilhost::ThreadObservations obs = one_process(800);
  const SyscallReading gil_wait = in_call(SYS_futex, 1100, FUTEX_WAIT_BITSET_PRIVATE);
  gilhost::ThreadTrack t{800, 801, "long", {}};
  std::int64_t cpu = 0;
  for (int i = 0; i < 6000; ++i) {
    cpu += i % 5 == 0 ? 10000 : 1000;
    t.readings.push_back(reading_us(10000 * (i + 1), cpu, 0, i % 2 ? gil_wait : running()));
  }
  obs.threads = {t, gilhost::ThreadTrack{800, 802, "main", {{reading_us(0, 0, 0, running())}}}};
  const gilhost::ThreadStates s = gilhost::classify_threads(obs, {{true, 1000, 1256}}, "");
  const gilhost::ThreadRecord& rec = s.threads[0];
  CHECK(rec.timeline.size() <= gilhost::ThreadRecord::kMaxSegments);
  const gilhost::ThreadTimes drawn = timeline_times(rec);
  for (ThreadState st : gilhost::kThreadStates)
    CHECK(std::abs(drawn.share(st) - rec.times.share(st)) < 0.001);
}

TEST_CASE("classify_threads: a spawned worker's GIL is where its libpython is loaded plus the runner's offset",
          "[thread_states]") {
  gilhost::ThreadObservations obs = one_process(600);
  gilhost::ThreadObservations::Process worker{true, false};
  worker.bases["/lib/libpython3.12.so.1.0"] = 0x500000;
  obs.processes[601] = worker;
  // The runner's GIL at 0x1000-0x1100 in its libpython loaded at 0x800; the worker's at 0x500000 + 0x800.
  const gilhost::GilReport report{true, 0x1000, 0x1100, 0, "/lib/libpython3.12.so.1.0", 0x800};
  const SyscallReading worker_gil = in_call(SYS_futex, 0x500000 + 0x800 + 0x60, FUTEX_WAIT_BITSET_PRIVATE);
  for (pid_t tid : {601, 602})
    obs.threads.push_back({601, tid, "w", {reading(0, 0, running()), reading(10, 0, worker_gil), reading(20, 10, worker_gil)}});
  gilhost::ThreadStates s = gilhost::classify_threads(obs, {report}, "");
  REQUIRE(s.threads.size() == 2);
  CHECK(s.threads[0].gil_located);
  CHECK(s.threads[0].times[ThreadState::gil] == 10000000);

  // Not loaded there (another build, or a static one): not located, and said.
  obs.processes[601].bases.clear();
  obs.processes[600].cpu_ns = 0;
  obs.processes[601].cpu_ns = 20000000;
  obs.processes[601].seen_cpu_ns = 20000000;
  s = gilhost::classify_threads(obs, {report}, "");
  CHECK_FALSE(s.threads[0].gil_located);
  CHECK(s.threads[0].times[ThreadState::gil] == 0);
  REQUIRE(s.coverage);
  CHECK(*s.coverage == 0.0);  // its waits are unknown: none of its time counts as covered
  CHECK(s.coverage_why.find("GIL not located in 1 process") != std::string::npos);
}

TEST_CASE("classify_threads: coverage is the threads' CPU over the kernel's count, and says what was missed",
          "[thread_states]") {
  gilhost::ThreadObservations obs = one_process(700);
  obs.threads.push_back({700, 700, "main", {reading(0, 0, running()), reading(100, 100, running())}});
  CHECK_FALSE(gilhost::classify_threads(obs, {{true, 1, 2}}, "").coverage);  // no checkpoint: not measured
  obs.processes[700].cpu_ns = 1790000000;
  obs.processes[700].seen_cpu_ns = 120000000;
  obs.misses.fd_threads = 40;
  obs.misses.capped_reads = 12;
  obs.misses.most_due = 300;
  const gilhost::ThreadStates s = gilhost::classify_threads(obs, {{true, 1, 2}}, "");
  REQUIRE(s.coverage);
  CHECK(*s.coverage == Approx(0.12 / 1.79));
  CHECK(s.coverage_why.find("descriptors ran out: 40 threads") != std::string::npos);
  CHECK(s.coverage_why.find("128-thread cap: up to 300 threads") != std::string::npos);
  CHECK(s.coverage_why.find("1.67 s of the tree's 1.79 s of CPU ran in threads that lived between two readings") !=
        std::string::npos);
  // The kernel's 10 ms ticks: a count just under the threads' is full coverage, not more.
  obs.processes[700].seen_cpu_ns = 1795000000;
  obs.misses = {};
  const gilhost::ThreadStates full = gilhost::classify_threads(obs, {{true, 1, 2}}, "");
  CHECK(*full.coverage == 1.0);
  CHECK(full.coverage_why.empty());
}

TEST_CASE("thread-state sampler: a process's own threads are read, counted against its kernel count",
          "[thread_states]") {
  // This process, two checkpoints: what its threads account for is close to all of its CPU.
  const pid_t self = ::getpid();
  gilhost::ThreadStateSampler sampler(self, gilhost::monotonic_ns(), 10);
  for (long tick = 0; tick < 3; ++tick) {
    sampler.begin_tick(tick);
    volatile double x = 0;
    for (int i = 0; i < 2000000; ++i) x = x + i;
    sampler.sample_process(self, 1, tick == 0, 0);
    sampler.end_tick();
  }
  const gilhost::ThreadObservations obs = sampler.take();
  REQUIRE(obs.processes.count(self));
  CHECK(obs.processes.at(self).cpu_ns == 0);
  CHECK(obs.processes.at(self).seen_cpu_ns > 0);
  CHECK(obs.misses.fd_threads == 0);
  CHECK(obs.threads.size() == 1);
}

TEST_CASE("classify_threads: interpreters the script made leave its process's GIL waits unknown", "[thread_states]") {
  gilhost::ThreadObservations obs = one_process(800);
  const SyscallReading gil_wait = in_call(SYS_futex, 0x1060, FUTEX_WAIT_BITSET_PRIVATE);
  for (pid_t tid : {800, 801})
    obs.threads.push_back({800, tid, "t", {reading(0, 0, running()), reading(10, 5, gil_wait)}});
  obs.processes[800].cpu_ns = 10000000;
  obs.processes[800].seen_cpu_ns = 10000000;
  gilhost::GilReport others{true, 0, 0, -1, "", 0};
  const gilhost::ThreadStates s = gilhost::classify_threads(obs, {{true, 0x1000, 0x1100}, others}, "");
  CHECK(s.gil == "located");  // the main interpreter's is
  REQUIRE(s.threads.size() == 2);
  CHECK_FALSE(s.threads[0].gil_located);
  REQUIRE(s.coverage);
  CHECK(*s.coverage == 0.0);
  CHECK(s.coverage_why.find("the script's own subinterpreters") != std::string::npos);
}
