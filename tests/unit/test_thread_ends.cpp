// The runner's reports of its threads' ends (protocol's ThreadEnd), merged into classify_threads: a
// thread the sampler never read, one it read, one whose tid the kernel reused; the coverage they give;
// and the bootstrap writing them for a real script's threads.
#include <catch2/catch.hpp>

#include <linux/futex.h>
#include <sys/syscall.h>

#include <set>

#include "discover/interpreter.hpp"
#include "helpers.hpp"
#include "measure/thread_states.hpp"
#include "protocol/codec.hpp"
#include "run/child.hpp"
#include "run/plan.hpp"
#include "util/strings.hpp"
#include "util/subprocess.hpp"

using gilhost::SyscallReading;
using gilhost::ThreadState;

namespace {

constexpr std::int64_t kMs = 1000000;
constexpr std::int64_t kOrigin = 5000 * kMs;  // the sampler's start, CLOCK_MONOTONIC
constexpr pid_t kRoot = 100;

SyscallReading running() {
  SyscallReading r;
  r.kind = SyscallReading::Kind::running;
  return r;
}

SyscallReading gil_wait() {
  SyscallReading r;
  r.kind = SyscallReading::Kind::in_syscall;
  r.number = SYS_futex;
  r.arg0 = 0x1040;
  r.arg1 = FUTEX_WAIT_BITSET_PRIVATE;
  return r;
}

gilhost::ThreadReading reading(std::int64_t t_ms, std::int64_t cpu_ms, std::int64_t delay_ms, SyscallReading s) {
  gilhost::ThreadReading r;
  r.t_ns = t_ms * kMs;
  r.cpu_ns = cpu_ms * kMs;
  r.delay_ns = delay_ms * kMs;
  r.syscall = s;
  return r;
}

// The runner's process: its main thread spinning 100 ms, read at 0 and 100 ms; the kernel's count
// `kernel_ms` at its checkpoint at 100 ms.
gilhost::ThreadObservations runner_process(std::int64_t kernel_ms, std::int64_t seen_ms) {
  gilhost::ThreadObservations obs;
  obs.interval_ms = 10;
  obs.root = kRoot;
  obs.start_ns = kOrigin;
  obs.processes[kRoot] = {true, true};
  obs.processes[kRoot].cpu_ns = kernel_ms * kMs;
  obs.processes[kRoot].seen_cpu_ns = seen_ms * kMs;
  obs.processes[kRoot].checkpoint_ns = 100 * kMs;
  obs.threads.push_back({kRoot, kRoot, "main", {reading(0, 0, 0, running()), reading(100, 100, 0, running())}});
  return obs;
}

// Thread 101 as it reported its end: started at 20 ms, ended at 50 ms, 10 ms on a CPU.
gilhost::ThreadEnds one_report() {
  gilhost::ThreadEnds ends;
  ends.reports.push_back({101, kOrigin + 20 * kMs, kOrigin + 50 * kMs, 10 * kMs});
  return ends;
}

const std::vector<gilhost::GilReport> kGil{{true, 0x1000, 0x1100}};

const gilhost::ThreadRecord& record(const gilhost::ThreadStates& s, std::int64_t tid) {
  for (const auto& t : s.threads)
    if (t.tid == tid) return t;
  FAIL("no thread " << tid);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("thread ends: a thread the sampler never read is known from its report, its waits unclassified",
          "[thread_states][thread_ends]") {
  const gilhost::ThreadStates s = gilhost::classify_threads(runner_process(110, 100), kGil, "", {}, one_report());
  CHECK(s.threads_reported == 1);
  const gilhost::ThreadRecord& t = record(s, 101);
  CHECK(t.python);
  CHECK(t.start_ns == 20 * kMs);
  CHECK(t.end_ns == 50 * kMs);
  // CPU exactly as reported; the other 20 ms (waiting for a core or for anything else) in no state at all.
  CHECK(t.times[ThreadState::cpu] == 10 * kMs);
  CHECK(t.unclassified_ns == 20 * kMs);
  CHECK(t.times.lived_ns() == 10 * kMs);
  CHECK(s.python_unclassified_ns == 20 * kMs);
  // Neither GIL wait nor "not GIL wait": the Python threads' classified time is the main thread's 100 ms
  // and the reported one's 10.
  CHECK(s.python_totals.lived_ns() == 110 * kMs);
  CHECK(s.gil_wait_share() == 0.0);
  // Coverage: CPU 100 seen + 10 reported, less 10 * 20/30 whose waits are unknown: 103.3 of 110; time
  // classified: 110 of 130. The smaller.
  REQUIRE(s.coverage);
  CHECK(*s.coverage == Approx(110.0 / 130.0));
  CHECK(s.coverage_why.find(gilhost::format_seconds(0.020) + " of the Python threads' " + gilhost::format_seconds(0.130) +
                            " off a CPU in waits no reading saw (1 thread known only from its report of its end)") !=
        std::string::npos);
  // Its timeline covers its life: the unclassified part drawn as a wait of no known kind.
  REQUIRE_FALSE(t.timeline.empty());
  CHECK(t.timeline.front().start_ns == 20 * kMs);
}

TEST_CASE("thread ends: a report closes what the sampler read: its CPU to the end, the rest as the wait last seen",
          "[thread_states][thread_ends]") {
  // Read once, at 30 ms, waiting for the GIL with 2 ms on a CPU and 1 waiting for one.
  gilhost::ThreadObservations obs = runner_process(110, 102);
  obs.threads.push_back({kRoot, 101, "t", {reading(30, 2, 1, gil_wait())}});
  const gilhost::ThreadStates without = gilhost::classify_threads(obs, kGil, "");
  CHECK(record(without, 101).times.lived_ns() == 3 * kMs);  // its life as far as the sampler saw it
  REQUIRE(without.coverage);
  CHECK(*without.coverage == Approx(102.0 / 110.0));

  const gilhost::ThreadStates s = gilhost::classify_threads(obs, kGil, "", {}, one_report());
  CHECK(s.threads.size() == 2);  // merged, not a thread of its own
  const gilhost::ThreadRecord& t = record(s, 101);
  CHECK(t.start_ns == 20 * kMs);
  CHECK(t.end_ns == 50 * kMs);
  CHECK(t.times[ThreadState::cpu] == 10 * kMs);
  // 7 ms off a CPU before the reading that saw it waiting for the GIL: the GIL. The 12 ms off a CPU after
  // it, with no probe: the wait it was last seen in, as an interval ending with the thread running is,
  // less the run queue's share of its 8 ms off a CPU before (1 of 8): 1.5 ms queued, 10.5 in the GIL.
  CHECK(t.times[ThreadState::runqueue] == 2500000);
  CHECK(t.times[ThreadState::gil] == 17500000);
  CHECK(t.unclassified_ns == 0);
  CHECK(t.times.lived_ns() == 30 * kMs);
  CHECK(s.python_unclassified_ns == 0);
  // Its 8 ms of CPU after the reading are in the kernel's count at the checkpoint, 102 + 8 of 110, and
  // every thread's time is classified.
  REQUIRE(s.coverage);
  CHECK(*s.coverage == Approx(1.0));
}

TEST_CASE("thread ends: probes after the last reading split the stretch to the end; its run queue as the thread's before",
          "[thread_states][thread_ends]") {
  // As above, and 3 probes after the reading saw it waiting for the GIL again.
  gilhost::ThreadObservations obs = runner_process(110, 102);
  obs.threads.push_back({kRoot, 101, "t", {reading(30, 2, 1, gil_wait())}, {gil_wait()}});
  obs.threads.back().probes_after_last.add(0, 3);
  const gilhost::ThreadStates s = gilhost::classify_threads(obs, kGil, "", {}, one_report());
  const gilhost::ThreadRecord& t = record(s, 101);
  CHECK(t.times[ThreadState::cpu] == 10 * kMs);
  // 12 ms off a CPU after the reading, seen in the GIL: less the run queue's share of its 8 ms off a CPU
  // before (1 of 8), 1.5 ms; the GIL 7 + 10.5 ms. Nothing unclassified, and the timeline draws the same.
  CHECK(t.times[ThreadState::runqueue] == 2500000);
  CHECK(t.times[ThreadState::gil] == 17500000);
  CHECK(t.unclassified_ns == 0);
  CHECK(t.times.lived_ns() == 30 * kMs);
  CHECK(s.python_unclassified_ns == 0);
  std::int64_t drawn_gil = 0;
  for (std::size_t k = 0; k < t.timeline.size(); ++k) {
    const std::int64_t to = k + 1 < t.timeline.size() ? t.timeline[k + 1].start_ns : t.end_ns;
    if (t.timeline[k].state == ThreadState::gil) drawn_gil += to - t.timeline[k].start_ns;
  }
  CHECK(drawn_gil == Approx(17.5 * kMs).epsilon(0.01));

  // Probes that saw it in a lock instead: the stretch is the lock's, not the wait last read.
  gilhost::SyscallReading lock = gil_wait();
  lock.arg0 = 0x9000;
  obs.threads.back().calls = {lock};
  const gilhost::ThreadStates in_lock = gilhost::classify_threads(obs, kGil, "", {}, one_report());
  const gilhost::ThreadRecord& l = record(in_lock, 101);
  // One share for the reading's GIL sight, six for the three probes (two each): 12 - 1.5 ms split 1:6.
  CHECK(l.times[ThreadState::lock] == Approx(9.0 * kMs).epsilon(0.001));
  CHECK(l.times[ThreadState::gil] == Approx(8.5 * kMs).epsilon(0.001));
  CHECK(l.unclassified_ns == 0);
}

TEST_CASE("thread ends: a thread read only while running has no wait seen: after its last reading, the run queue's share, the rest unclassified",
          "[thread_states][thread_ends]") {
  gilhost::ThreadObservations obs = runner_process(110, 105);
  obs.threads.push_back({kRoot, 101, "t", {reading(30, 5, 1, running()), reading(40, 5, 1, running())}});
  // Without its end, its off-CPU time after the readings is unknown, and the still counters say queued.
  const gilhost::ThreadStates without = gilhost::classify_threads(obs, kGil, "");
  CHECK(record(without, 101).unclassified_ns == 0);
  const gilhost::ThreadStates s = gilhost::classify_threads(obs, kGil, "", {}, one_report());
  const gilhost::ThreadRecord& t = record(s, 101);
  CHECK(t.times[ThreadState::cpu] == 10 * kMs);
  CHECK(t.times[ThreadState::gil] == 0);
  CHECK(t.times[ThreadState::other] == 0);
  // Queued between its two readings (runnable at both, its counters still): the run queue's, with the 1 ms
  // its counters had. Before them, 4 ms off a CPU that no sight names: unclassified. After them, 5 ms off
  // a CPU: the run queue's share of its 15 ms off a CPU before (11 of 15), 3.67 ms; the rest unclassified.
  CHECK(t.times[ThreadState::runqueue] == Approx(11 * kMs + 5.0 * kMs * 11 / 15).epsilon(1e-6));
  CHECK(t.unclassified_ns == Approx(4 * kMs + 5.0 * kMs * 4 / 15).epsilon(1e-6));
  CHECK(t.times.lived_ns() + t.unclassified_ns == 30 * kMs);
}

TEST_CASE("thread ends: a thread running at its last reading: the stretch after it goes as its recent sights, less the run queue's share",
          "[thread_states][thread_ends]") {
  // Waiting for the GIL at 30 ms, running at 40 ms; its end reported at 50 ms with 10 ms of CPU.
  gilhost::ThreadObservations obs = runner_process(110, 106);
  obs.threads.push_back({kRoot, 101, "t", {reading(30, 2, 1, gil_wait()), reading(40, 6, 1, running())}});
  const gilhost::ThreadStates s = gilhost::classify_threads(obs, kGil, "", {}, one_report());
  const gilhost::ThreadRecord& t = record(s, 101);
  CHECK(t.times[ThreadState::cpu] == 10 * kMs);
  // Off a CPU: 7 ms before the first reading and 6 between the two, the GIL's (the waits seen). The 6 ms
  // after: the run queue's share of its 14 ms off a CPU before (1 of 14), the rest the GIL's, as its sights.
  CHECK(t.times[ThreadState::runqueue] == Approx(1 * kMs + 6.0 * kMs / 14).epsilon(1e-6));
  CHECK(t.times[ThreadState::gil] == Approx(13 * kMs + 6.0 * kMs * 13 / 14).epsilon(1e-6));
  CHECK(t.unclassified_ns == 0);
  CHECK(t.times.lived_ns() == 30 * kMs);
}

TEST_CASE("thread ends: a thread read long after its reported end is still one thread, closed by its report",
          "[thread_states][thread_ends]") {
  // Read at 30 ms waiting for the GIL, and again at 90 ms, 40 ms after the end it reported at 50 ms: still
  // exiting, queued for a core on a loaded machine.
  gilhost::ThreadObservations obs = runner_process(110, 102);
  obs.processes[kRoot].checkpoint_ns = 100 * kMs;
  obs.threads.push_back({kRoot, 101, "t", {reading(30, 2, 1, gil_wait()), reading(90, 11, 30, running())}});
  const gilhost::ThreadStates s = gilhost::classify_threads(obs, kGil, "", {}, one_report());
  REQUIRE(s.threads.size() == 2);  // the main thread and 101, not a second 101 made of the report
  const gilhost::ThreadRecord& t = record(s, 101);
  CHECK(t.name == "t");
  CHECK(t.start_ns == 20 * kMs);  // from the report: before the first reading
  CHECK(t.end_ns == 90 * kMs);    // to the last reading
  CHECK(t.times[ThreadState::cpu] == 11 * kMs);
  CHECK(t.unclassified_ns == 0);
  CHECK(s.threads_reported == 1);
}

TEST_CASE("thread ends: a reused tid's report stands alone; a report after the checkpoint adds no CPU",
          "[thread_states][thread_ends]") {
  // The sampler read tid 101 at 200-210 ms: another thread than the one that reported [20, 50] ms.
  gilhost::ThreadObservations obs = runner_process(110, 100);
  obs.processes[kRoot].checkpoint_ns = 300 * kMs;
  obs.threads.push_back({kRoot, 101, "later", {reading(200, 1, 0, gil_wait()), reading(210, 1, 0, gil_wait())}});
  const gilhost::ThreadStates s = gilhost::classify_threads(obs, kGil, "", {}, one_report());
  REQUIRE(s.threads.size() == 3);
  int reported = 0;
  for (const auto& t : s.threads)
    if (t.tid == 101 && t.start_ns == 20 * kMs) ++reported;
  CHECK(reported == 1);
  CHECK(record(s, 101).times[ThreadState::gil] == 10 * kMs);  // the sampler's thread, as it read it

  // A thread that ended after the process's last checkpoint: its CPU is not in the kernel's count there.
  gilhost::ThreadObservations early = runner_process(105, 100);
  early.processes[kRoot].checkpoint_ns = 40 * kMs;
  gilhost::ThreadEnds ends = one_report();
  ends.reports[0].cpu_ns = 29900000;  // on a CPU nearly all its life: 0.1 ms unclassified
  const gilhost::ThreadStates late = gilhost::classify_threads(early, kGil, "", {}, ends);
  CHECK(late.python_unclassified_ns == 100000);
  REQUIRE(late.coverage);
  CHECK(*late.coverage == Approx(100.0 / 105.0));
  early.processes[kRoot].checkpoint_ns = 60 * kMs;  // ended before it: its 29.9 ms count
  CHECK(*gilhost::classify_threads(early, kGil, "", {}, ends).coverage == Approx(129.9 / 130.0));
}

TEST_CASE("thread ends: a free-threaded spinner known only from its report is covered; reports past the cap are said",
          "[thread_states][thread_ends]") {
  // No GIL: 29.9 ms on a CPU in a life of 30 ms.
  gilhost::ThreadEnds ends = one_report();
  ends.reports[0].cpu_ns = 29900000;
  ends.dropped = 7;
  const gilhost::ThreadStates s = gilhost::classify_threads(runner_process(110, 100), {{false, 0, 0}}, "", {}, ends);
  CHECK(record(s, 101).unclassified_ns == 100000);
  REQUIRE(s.coverage);
  CHECK(*s.coverage > 0.99);
  CHECK(s.coverage_why.find("off a CPU in waits no reading saw") == std::string::npos);  // under 1 %: not worth a word
  CHECK(s.coverage_why.find("the runner reported the ends of 1 thread, not of 7 more") != std::string::npos);
}

TEST_CASE("thread ends: the protocol carries them; the bootstrap reports each threading.Thread as it ends",
          "[thread_states][thread_ends][python]") {
  gilhost::protocol::Outcome o;
  o.thread_ends = {{12, 100, 900, 300}, {13, 200, 800, 100}};
  o.thread_ends_dropped = 3;
  std::string why;
  const auto back = gilhost::protocol::decode_outcome(nlohmann::json(o).dump(), why);
  INFO(why);
  REQUIRE(back);
  REQUIRE(back->thread_ends.size() == 2);
  CHECK(back->thread_ends[1].native_id == 13);
  CHECK(back->thread_ends[0].ended_ns == 900);
  CHECK(back->thread_ends[0].cpu_ns == 300);
  CHECK(back->thread_ends_dropped == 3);

  const std::string python3 = gilhost_test::real_python3();
  if (python3.empty()) {
    WARN("no python3 on PATH: not running the bootstrap");
    return;
  }
  gilhost_test::TempDir tmp;
  gilhost_test::write_file(tmp / "case.py",
                           "import threading, time\n"
                           "def spin():\n"
                           "    end = time.thread_time() + 0.005\n"
                           "    while time.thread_time() < end: pass\n"
                           "def run(n):\n"
                           "    ts = [threading.Thread(target=spin) for _ in range(n)]\n"
                           "    for t in ts: t.start()\n"
                           "    for t in ts: t.join()\n"
                           "    return [t.native_id for t in ts]\n");
  gilhost::Interpreter python;
  python.executable = python3;
  python.shared = false;
  auto run = [&](int n) {
    gilhost::RunnerSpec spec;
    spec.executable = python.executable;
    spec.script = (tmp / "case.py").string();
    spec.mode = "call";
    spec.function = "run";
    spec.kwargs = nlohmann::json{{"n", n}};
    gilhost::ChildRequest req;
    req.argv = gilhost::child_argv(spec, python, "/unused/gilhost-runner", 3, -1);
    req.env = {"PATH=/usr/bin:/bin", "LC_ALL=C"};
    req.timeout_s = 60;
    return gilhost::run_child(req);
  };
  const gilhost::ChildResult r = run(3);
  INFO("stderr: " << r.stderr_text);
  REQUIRE(r.events.case_event);
  const gilhost::protocol::CaseEvent& c = *r.events.case_event;
  const auto& ends = c.outcome.thread_ends;
  REQUIRE(ends.size() == 3);
  std::set<std::int64_t> tids;
  for (const auto& t : c.outcome.result) tids.insert(t.get<std::int64_t>());
  for (const auto& e : ends) {
    CHECK(tids.count(e.native_id) == 1);
    CHECK(e.started_ns >= c.start_ns);
    CHECK(e.ended_ns <= c.end_ns);
    // It spun 5 ms of its own CPU time: that much at least, and within its life.
    CHECK(e.cpu_ns >= 5 * kMs);
    CHECK(e.cpu_ns <= e.ended_ns - e.started_ns);
  }
  CHECK(c.outcome.thread_ends_dropped == 0);
  // A case without threads reports none.
  const gilhost::ChildResult none = run(0);
  REQUIRE(none.events.case_event);
  CHECK(none.events.case_event->outcome.thread_ends.empty());
}
