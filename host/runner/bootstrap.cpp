#include "runner/bootstrap.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "util/checksum.hpp"

namespace gilhost {

namespace {
// Kept free of imports that the interpreter has not already made at start-up (json, re, runpy, types),
// so the host adds as little fixed cost per run as possible. Results are encoded by a small JSON writer.
constexpr char kBootstrap[] = R"PY(
import sys, os, time, marshal, _thread  # all loaded by start-up: held whatever the script does to sys.modules


_state = {"result": None, "has_result": False, "error": None, "metrics": {}, "marks": [],
          "exit_code": 0, "fn": None, "code": None, "gil_reenabled_by": [], "thread_names": {},
          "thread_ends": [], "thread_ends_dropped": [0], "wrapped": []}


def _json_str(s):
    # Most texts need no escape: checked by str's own methods (a subclass's cannot answer for them),
    # not a character at a time (~2 us a key in a Python loop, most of _finish's time).
    if str.isascii(s) and str.isprintable(s) and str.find(s, '"') < 0 and str.find(s, '\\') < 0:
        return '"' + str.__str__(s) + '"'
    out = ['"']
    for ch in s:
        if ch == '"' or ch == '\\':
            out.append('\\' + ch)
        elif ch < ' ' or ch == '\x7f':
            out.append('\\u%04x' % ord(ch))
        elif '\ud800' <= ch <= '\udfff':
            # A lone surrogate has no UTF-8: kept as the text \udc80 (backslash and all), as
            # errors="backslashreplace" writes it (docs/results-format.md).
            out.append('\\\\u%04x' % ord(ch))
        else:
            out.append(ch)
    out.append('"')
    return ''.join(out)


def _plain(v, depth=0):
    # JSON for what most runs hand over and what _finish's own fields hold, with the exact built-in types
    # (no code of the script's runs here): None, bools, ints within 64 bits, finite floats, text, and lists,
    # tuples and dicts with text keys of these. None for anything else, which _json (cold) writes or
    # refuses; it writes the same text for all of these.
    if v is None or v is True or v is False:
        return "null" if v is None else "true" if v else "false"
    t = type(v)
    if t is str:
        return _json_str(v)
    if t is int:
        return str(v) if -9223372036854775808 <= v <= 9223372036854775807 else None
    if t is float:
        return repr(v) if v - v == 0 else None  # not NaN, not infinite
    if depth >= 64:
        return None
    if t is list or t is tuple:
        parts = []
        for x in v:
            p = _plain(x, depth + 1)
            if p is None:
                return None
            parts.append(p)
        return "[" + ",".join(parts) + "]"
    if t is dict:
        parts = []
        for k, x in v.items():
            p = _plain(x, depth + 1) if type(k) is str else None
            if p is None:
                return None
            parts.append(_json_str(k) + ":" + p)
        return "{" + ",".join(parts) + "}"
    return None


def _recorded_plain(name, value):
    text = _plain(value)
    return text if text is not None else _cold("_recorded")(name, value)


def _cold(name):
    # The part of the bootstrap below its "cold" line (errors, and values _plain leaves to _json), which
    # most runs never use: the runner loads it marshalled in `_cold_code` and runs it here at its first
    # use. In exec mode, and in a runner that compiled the bootstrap whole, it has run already.
    g = globals()
    if name not in g:
        exec(marshal.loads(g.pop("_cold_code")), g)
    return g[name]


def _install_gilhost_module():
    mod = type(sys)("gilhost")
    mod.IN_HOST = True
    mod.index = _spec.get("index", 0)

    def result(value):
        _state["result"] = value
        _state["has_result"] = True

    def metric(name, value):
        _state["metrics"][str(name)] = value

    def mark(label):
        _state["marks"].append([str(label), time.monotonic_ns()])

    mod.result, mod.metric, mod.mark = result, metric, mark
    sys.modules["gilhost"] = mod


def _wrap(owner, attr, wrapper):
    # owner.attr becomes wrapper until the run ends (_put_back).
    _state["wrapped"].append((owner, attr, wrapper, getattr(owner, attr)))
    setattr(owner, attr, wrapper)


def _put_back():
    # The originals back where our wrappers still stand (a script's own wrapper over ours is left alone).
    # A wrapper left in _thread or _imp keeps this whole namespace alive until Py_FinalizeEx clears those
    # modules, late, and finalising then took ~0.15 ms longer a run (docs/performance.md). What the
    # wrappers gather has gone out with the outcome by now. threading holds _thread's starters as its own
    # too (wrapped with them, or taken as the script imported it after we wrapped): put back with them.
    threading = sys.modules.get("threading")
    wrapped = _state["wrapped"]
    while wrapped:
        owner, attr, wrapper, original = wrapped.pop()
        for where, name in ((owner, attr), (threading, "_" + attr)):
            try:  # a script may have left anything in sys.modules: the outcome is taken already
                if where is not None and getattr(where, name, None) is wrapper:
                    setattr(where, name, original)
            except BaseException:
                pass


def _gil_enabled():
    probe = getattr(sys, "_is_gil_enabled", None)
    return bool(probe()) if probe is not None else True


def _watch_gil_reenabling():
    # Free-threaded builds only. An extension module that does not declare Py_mod_gil turns the GIL back
    # on while _imp creates it; watching that flip names the module whatever the warning filters do with
    # the RuntimeWarning CPython issues (ignore, error, catch_warnings), and imports nothing.
    import _imp
    enabled = sys._is_gil_enabled
    names = _state["gil_reenabled_by"]

    def watch(create):
        def create_module(spec, *args, **kwargs):
            before = enabled()
            try:
                return create(spec, *args, **kwargs)
            finally:
                name = getattr(spec, "name", "?")
                if not before and enabled() and name not in names:
                    names.append(name)
        return create_module

    for attr in ("create_dynamic", "create_builtin"):
        _wrap(_imp, attr, watch(getattr(_imp, attr)))


# Thread ends kept for the host, at most: a run of more threads than this says how many it left out.
_MAX_THREAD_ENDS = 50000


def _thread_ended(tid, started, ends):
    # A thread's CPU time as it ends: exact (the kernel brings the running thread's count up to date).
    # Nothing from /proc: opening the thread's own file there made each short thread live ~0.4 ms longer.
    if len(ends) < _MAX_THREAD_ENDS:
        ends.append((tid, started, time.monotonic_ns(), time.thread_time_ns()))
    else:
        _state["thread_ends_dropped"][0] += 1


def _watch_thread_names():
    # Each Python thread's name by native id, for the host's thread table: before 3.14 /proc names every
    # thread after the runner. threading keeps _thread's starter under its own name when imported, so the
    # starter is wrapped in both; a thread records its name as it starts, however short it lives, and when
    # it was started and what it used as it ends (_thread_ended): the sampler misses most threads that
    # live a few ms, and the host closes what it saw of each with these exact figures.
    names = _state["thread_names"]
    ends = _state["thread_ends"]
    clock = time.monotonic_ns

    def named(function):
        owner = getattr(function, "__self__", None)  # a Thread's _bootstrap
        if owner is None or not hasattr(owner, "name"):
            return function
        started = clock()

        def run(*args, **kwargs):
            tid = _thread.get_native_id()
            try:
                names[tid] = str(owner.name)
            except BaseException:
                pass
            try:
                return function(*args, **kwargs)
            finally:
                _thread_ended(tid, started, ends)
        return run

    threading = sys.modules.get("threading")
    for attr in ("start_new_thread", "start_joinable_thread"):
        start = getattr(_thread, attr, None)
        if start is None:
            continue

        def wrapped(function, *args, _start=start, **kwargs):
            return _start(named(function), *args, **kwargs)
        _wrap(_thread, attr, wrapped)
        if threading is not None and getattr(threading, "_" + attr, None) is start:
            setattr(threading, "_" + attr, wrapped)  # _put_back puts threading's copy back with _thread's


def _thread_names():
    # [[native_id, name], ...]: every thread seen starting, renamed as the live ones are named at the end.
    names = _state["thread_names"]
    names[_thread.get_native_id()] = "MainThread"
    threading = sys.modules.get("threading")
    if threading is not None:
        try:
            for t in threading.enumerate():
                if getattr(t, "native_id", None) is not None:
                    names[t.native_id] = str(t.name)
        except BaseException:
            pass
    return [[k, v] for k, v in list(names.items())]


def _gil_forced():
    # PYTHON_GIL=1 or -X gil=1 on a free-threaded build: sys.flags.gil is None there unless one is given.
    return bool(_spec.get("free_threaded")) and getattr(sys.flags, "gil", None) == 1


def _check_not_shadowed(name, script):
    # A call case imports its script by name. A script named like a module this interpreter has imported
    # already (abc.py, io.py, stat.py) would get that module instead, and the case "has no attribute".
    loaded = sys.modules.get(name)
    if loaded is None:
        return
    where = getattr(loaded, "__file__", None)
    if where and os.path.realpath(where) == os.path.realpath(script):
        return
    raise ImportError("%s cannot be imported as %r: Python has its own module of that name, imported already "
                      "(%s); rename the script" % (script, name, where or "built in"))


def _compile(data, path, optimize=-1):
    # compile(data, path, "exec", dont_inherit=True) as `python script.py` compiles its script: by the C API
    # (Py_CompileStringObject, the runner's _compile_c). The builtin's first call in a process makes the
    # ast module's ~120 classes (its PyAST_Check), 1.2-2.2 ms that python never spends on a script.
    # The builtin where the runner is not (exec mode) and for what the C call cannot take (a NUL byte, an
    # -O level of its own).
    compile_c = globals().get("_compile_c")
    if compile_c is not None and optimize == -1 and type(data) is bytes and type(path) is str and b"\0" not in data:
        return compile_c(data, path)
    return compile(data, path, "exec", dont_inherit=True, optimize=optimize)


def _source_to_code(data, path, *, _optimize=-1):
    # The import system's SourceLoader.source_to_code through _compile, for a script imported from its
    # source (no bytecode cached yet, or none written: PYTHONDONTWRITEBYTECODE, a read-only folder).
    return _compile(data, path, _optimize)


def _cached_code(path, cached):
    # The script's bytecode as the loader's get_code takes it from a fresh timestamp pyc, read by the
    # runner in C (_read_pyc_c: ~0.07 ms a run less than the loader's Python frames and file object), its
    # co_filename fixed as the loader fixes it; None where the loader must look for itself (no pyc, a
    # stale, hash-based or corrupt one, exec mode, no bytecode cache for this implementation).
    read = globals().get("_read_pyc_c")
    if read is None or type(path) is not str or type(cached) is not str:
        return None
    code = read(os.fsencode(path), os.fsencode(cached), sys.modules["_frozen_importlib_external"].MAGIC_NUMBER)
    if code is not None:
        sys.modules["_imp"]._fix_co_filename(code, path)
    return code


def _exec_script(loader, module):
    # loader.exec_module(module), with our _source_to_code on the loader while it gets the code.
    if type(loader) is not sys.modules["_frozen_importlib_external"].SourceFileLoader:
        return loader.exec_module(module)
    code = _cached_code(loader.path, module.__spec__.cached)
    if code is None:
        loader.source_to_code = _source_to_code
        try:
            code = loader.get_code(module.__name__)
        finally:
            del loader.source_to_code
    exec(code, module.__dict__)


def _import_script(name, script):
    # The script by its path, as importlib.util.spec_from_file_location and exec_module do: no search of
    # sys.path (a package of the same name beside it is not taken for it, and its folder is not listed),
    # through the import system's own frozen modules (importlib.util would be one more import every run).
    spec = sys.modules["_frozen_importlib_external"].spec_from_file_location(name, script)
    if spec is None:  # a suffix the import system does not load: found, or not, as `import` would
        __import__(name)
        return sys.modules[name]
    module = sys.modules["_frozen_importlib"].module_from_spec(spec)
    sys.modules[name] = module
    try:
        _exec_script(spec.loader, module)
    except BaseException:
        if sys.modules.get(name) is module:
            del sys.modules[name]
        raise
    return sys.modules[name]  # what the script put there for itself, as `import` returns


def _setup(module):
    # The case's `setup`: called with the case's kwargs before the clock starts (prepare time, not case time).
    name = _spec.get("setup") or ""
    if not name:
        return
    fn = getattr(module, name, None)
    if not callable(fn):
        raise AttributeError("setup = %r: %s has no function %r" % (name, module.__name__, name))
    fn(**_spec.get("kwargs", {}))


def _prepare():
    exe = _spec["executable"]
    # spawn and forkserver start `sys.executable`: it must be the interpreter, never the host.
    if sys.executable != exe:
        sys.executable = exe
    script = _spec["script"]
    module_name = _spec.get("module") or ""
    hex_args = _spec.get("argv_hex")  # arguments that are not UTF-8, byte for byte
    args = [os.fsdecode(bytes.fromhex(h)) for h in hex_args] if hex_args is not None else list(_spec.get("argv", []))
    sys.argv = [script or "-m"] + args
    # As python does: the script's folder first on sys.path, or for -m the working directory.
    sys.path.insert(0, os.getcwd() if module_name else os.path.dirname(os.path.abspath(script)))
    _install_gilhost_module()
    if _spec.get("free_threaded") and hasattr(sys, "_is_gil_enabled"):
        _watch_gil_reenabling()
    _watch_thread_names()
    _state["gil_enabled_before"] = _gil_enabled()
    t_script = time.monotonic_ns()
    try:
        if _spec["mode"] == "call":
            name = module_name or os.path.splitext(os.path.basename(script))[0]
            if module_name:
                __import__(name)
                module = sys.modules[name]
            else:
                _check_not_shadowed(name, script)
                module = _import_script(name, script)
            _setup(module)
            _state["fn"] = getattr(module, _spec["function"])
        elif module_name:
            # What `python -m` does before running the code (a package runs its __main__); runpy's
            # private helper, there since 3.4, so the error for a missing module is python's own.
            import runpy
            _, spec, _state["code"] = runpy._get_module_details(module_name)
            _state["module_spec"] = spec
            sys.argv[0] = spec.origin
        else:
            with open(script, "rb") as f:
                _state["code"] = _compile(f.read(), script)
    except SystemExit as exc:
        _cold("_record_exit")(exc)
    except BaseException as exc:
        _cold("_record_error")(exc)
    # Of prepare, the script's own share: importing it (its module-level code and setup) or compiling it,
    # what `python script.py` pays too; the rest is the bootstrap's set-up.
    _state["import_ns"] = time.monotonic_ns() - t_script


def _run():
    try:
        if _state["fn"] is not None:
            _state["result"] = _state["fn"](**_spec.get("kwargs", {}))
            _state["has_result"] = True
        elif _state["code"] is not None:
            main = sys.modules["__main__"].__dict__
            spec = _state.get("module_spec")
            if spec is not None:  # runpy._run_code's globals for `python -m`
                main.update(__file__=spec.origin, __cached__=spec.cached, __loader__=spec.loader,
                            __package__=spec.parent, __spec__=spec)
            else:
                main["__file__"] = _spec["script"]
                main["__cached__"] = None
            exec(_state["code"], main)
    except SystemExit as exc:
        _cold("_record_exit")(exc)
    except BaseException as exc:
        _cold("_record_error")(exc)


def _threads_alive(threading):
    # sys.modules["threading"] is the script's to replace: None (not known) where what is there fails.
    if threading is None:
        return 1
    try:
        return int(threading.active_count())
    except BaseException:
        return None


def _finish():
    threading = sys.modules.get("threading")
    gil = _state["gil_enabled_after"] = _gil_enabled()  # the runner reads it here, not from the outcome
    result = _recorded_plain("result", _state["result"]) if _state["has_result"] else "null"
    metrics = _recorded_plain("metrics", _state["metrics"]) or "{}"
    marks = _recorded_plain("marks", _state["marks"]) or "[]"
    fields = {
        "has_result": result is not None and _state["has_result"],
        "error": _state["error"],
        "exit_code": _state["exit_code"],
        "gil_enabled_before": _state.get("gil_enabled_before"),
        "import_ns": _state.get("import_ns"),
        "gil_enabled": gil,
        "gil_forced": _gil_forced(),
        "gil_reenabled_by": _state["gil_reenabled_by"],
        "threads_alive": _threads_alive(threading),
        "python_version": "%d.%d.%d" % sys.version_info[:3],
        "thread_names": _thread_names(),
        "main_native_id": _thread.get_native_id(),
        "thread_ends_dropped": _state["thread_ends_dropped"][0],
    }
    # The keys are ours and plain: written as they are.
    out = ['"%s":%s' % (k, _recorded_plain(k, v)) for k, v in fields.items()]
    out.append('"result":%s,"metrics":%s,"marks":%s' % (result or "null", metrics, marks))
    if _state["thread_ends"]:  # four integers each: written directly, not through _json
        out.append('"thread_ends":[%s]' % ",".join("[%d,%d,%d,%d]" % e for e in list(_state["thread_ends"])))
    _put_back()
    return '{' + ','.join(out) + '}'


# gilhost: cold
class UnrecordableValue(ValueError):
    # A value JSON cannot hold as it is: too deep, circular, or a dict whose keys would collide.
    __module__ = "gilhost"

    def __init__(self, why):
        ValueError.__init__(self, why)
        self.why = why
        self.root = "value"
        self.path = []

    def __str__(self):
        where = "".join("[%r]" % p for p in self.path)
        return "gilhost cannot record it: %s (at %s%s)" % (self.why, self.root, where)


def _key_text(k, seen):
    # JSON keys are text: a str as it is, an int as its digits (as json.dumps does); two keys that would
    # become one text, or a key of any other type, cannot be recorded faithfully.
    if isinstance(k, str):
        text = k
    elif isinstance(k, int) and not isinstance(k, bool):
        text = _int_text(int(k))
    else:
        raise UnrecordableValue("a dict key that is not a string or an int: %s" % _safe_repr(k))
    if text in seen:
        raise UnrecordableValue("two dict keys are both %s in JSON: %s and %s"
                                % (_json_str(text), _safe_repr(seen[text]), _safe_repr(k)))
    seen[text] = k
    return text


def _safe_repr(v):
    try:
        return "%s (%s)" % (repr(v), type(v).__name__)
    except BaseException:
        return "a %s" % type(v).__name__


def _int_text(v):
    try:
        return str(v)
    except ValueError:  # beyond sys.get_int_max_str_digits() (3.11+): lifted for this one conversion
        limit = sys.get_int_max_str_digits()
        sys.set_int_max_str_digits(0)
        try:
            return str(v)
        finally:
            sys.set_int_max_str_digits(limit)


def _json(v, depth=0, open_ids=None):
    # JSON has no NaN or infinity, and the host reads integers beyond 64 bits as doubles: those are
    # written as tagged values, {"$float": "nan"} and {"$int": "<digits>"} (docs/results-format.md).
    # What it cannot hold as it is raises UnrecordableValue: the case's error, never a silent repr().
    if depth > 64:
        raise UnrecordableValue("nested deeper than 64 levels")
    if v is None or v is True or v is False:
        return {None: 'null', True: 'true', False: 'false'}[v]
    if isinstance(v, int):
        v = int(v)
        if -9223372036854775808 <= v <= 9223372036854775807:
            return str(v)
        return '{"$int":"%s"}' % _int_text(v)
    if isinstance(v, float):
        if v != v:
            return '{"$float":"nan"}'
        if v in (float('inf'), float('-inf')):
            return '{"$float":"%s"}' % ('inf' if v > 0 else '-inf')
        return repr(float(v))
    if isinstance(v, str):
        return _json_str(v)
    if isinstance(v, (list, tuple, dict)):
        open_ids = open_ids if open_ids is not None else set()
        if id(v) in open_ids:
            raise UnrecordableValue("a list or dict that contains itself")
        open_ids.add(id(v))
        try:
            return _json_container(v, depth, open_ids)
        finally:
            open_ids.discard(id(v))
    return _json_str(repr(v))


def _json_container(v, depth, open_ids):
    parts = []
    if isinstance(v, dict):
        seen = {}
        for k, x in v.items():
            key = _key_text(k, seen)
            try:
                parts.append(_json_str(key) + ':' + _json(x, depth + 1, open_ids))
            except UnrecordableValue as e:
                e.path.insert(0, k)
                raise
        return '{' + ','.join(parts) + '}'
    for i, x in enumerate(v):
        try:
            parts.append(_json(x, depth + 1, open_ids))
        except UnrecordableValue as e:
            e.path.insert(0, i)
            raise
    return '[' + ','.join(parts) + ']'


def _record_error(exc):
    import traceback
    t = type(exc)
    try:
        message = str(exc)
    except BaseException as e:  # the exception's own __str__ failed: still the case's error
        message = "<str() of the exception raised %s>" % type(e).__name__
    _state["error"] = {"type": t.__name__, "qualname": "%s.%s" % (t.__module__, t.__qualname__),
                       "message": message}
    # Keep what `python script.py` would print, for the captured stderr.
    try:
        traceback.print_exception(t, exc, exc.__traceback__)
    except BaseException:
        pass
    _state["exit_code"] = 1


def _record_exit(exc):
    code = exc.code
    if code is None:
        _state["exit_code"] = 0
    elif isinstance(code, int):
        # As python exits: a code no C long holds is -1 (status 255); True is 1.
        code = int(code)
        _state["exit_code"] = code if -9223372036854775808 <= code <= 9223372036854775807 else -1
    else:
        try:
            print(code, file=sys.stderr)
        except BaseException:
            pass
        _state["exit_code"] = 1


def _recorded(name, value):
    # `value` as JSON, or None with the case's error when it cannot be recorded (an UnrecordableValue,
    # or whatever the script's own __repr__, items() or __iter__ raised): the case's fault, its timing.
    try:
        return _json(value)
    except BaseException as exc:
        if isinstance(exc, UnrecordableValue):
            exc.root = name
            exc = exc.with_traceback(None)  # gilhost's frames would only hide the message
        if _state["error"] is None:
            _record_error(exc)
        _state["exit_code"] = _state["exit_code"] or 1
        return None


)PY";

// Exec mode only: the bracketing the runner does in C++ otherwise. Kept out of the code the runner loads
// (a smaller marshal to read in every run).
const char* const kExecMain = R"PY(
def _rusage_ns():
    import resource
    s = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return [int(s.ru_utime * 1e9), int(s.ru_stime * 1e9), int(c.ru_utime * 1e9), int(c.ru_stime * 1e9),
            s.ru_nvcsw + c.ru_nvcsw, s.ru_nivcsw + c.ru_nivcsw]


def _keep_high(fd, at):
    # A close-on-exec copy of fd at `at` (1024 and above), out of reach of daemon-style code's
    # os.closerange(3, 1024), as the runner keeps its pipes; fd itself where that cannot be.
    try:
        os.fstat(at)
        return fd  # taken
    except OSError:
        pass
    try:
        return os.dup2(fd, at, inheritable=False)
    except OSError:  # at or above the limit on descriptors
        return fd


def _exec_main():
    # Exec mode: no host code in this process, so bracket the case from here with the same clocks.
    fd = _keep_high(_spec["event_fd"], 1024)
    token = _spec.pop("token", "")  # local: the script shares __main__'s globals with us here
    tfd = _spec.pop("token_fd", -1)
    if tfd >= 0:  # the pipe gilhost left it in (run/child.cpp), read to its end and closed
        parts = []
        while True:
            part = os.read(tfd, 256)
            if not part:
                break
            parts.append(part)
        os.close(tfd)
        token = b"".join(parts).decode("ascii", "replace")
    watch = _spec.get("watch_fd", -1)
    if watch >= 0:
        # The pipe whose closing at gilhost's death kills our process group (run/child.cpp).
        if _keep_high(watch, 1025) != watch:
            os.close(watch)
        else:
            os.set_inheritable(watch, False)
    t_init = time.monotonic_ns()
    _prepare()
    r0 = _rusage_ns()
    t0 = time.monotonic_ns()
    _run()
    t1 = time.monotonic_ns()
    r1 = _rusage_ns()
    d = [b - a for a, b in zip(r0, r1)]
    cpu = {"user_ns": d[0], "sys_ns": d[1], "children_user_ns": d[2], "children_sys_ns": d[3],
           "cpu_ns": d[0] + d[1] + d[2] + d[3], "voluntary_switches": d[4], "involuntary_switches": d[5]}
    # pid at the write: a process forked in the case that gets here is not the one gilhost started.
    line = ('{"event":"case","mode":"exec","start_ns":%d,"end_ns":%d,"wall_ns":%d,"prepare_ns":%d,'
            '"cpu":%s,"outcome":%s,"pid":%d,"token":%s}\n'
            % (t0, t1, t1 - t0, t0 - t_init, _json(cpu), _finish(), os.getpid(), _json_str(token)))
    os.write(fd, line.encode())
    sys.stdout.flush()
    raise SystemExit(_state["exit_code"])
)PY";

// The 4 hex digits at `p` as a number, or -1.
long hex4(const std::string& s, std::size_t p) {
  if (p + 4 > s.size()) return -1;
  long v = 0;
  for (std::size_t i = p; i < p + 4; ++i) {
    const char c = s[i];
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

void append_json_string_as_python(std::string& out, const std::string& s) {
  // JSON string escapes are valid in Python string literals (nlohmann's dump() never emits "\/"), except
  // one: JSON writes a character outside the BMP as a \uD83D\uDE00 surrogate pair, which Python keeps as
  // two lone surrogates (a str that cannot even be encoded). Those pairs become one \U0001F600.
  const std::string escaped = nlohmann::json(s).dump(-1, ' ', true);
  for (std::size_t i = 0; i < escaped.size(); ++i) {
    if (escaped[i] != '\\' || i + 1 >= escaped.size()) {
      out += escaped[i];
      continue;
    }
    const long hi = escaped[i + 1] == 'u' ? hex4(escaped, i + 2) : -1;
    const long lo = hi >= 0xD800 && hi <= 0xDBFF && escaped.compare(i + 6, 2, "\\u") == 0 ? hex4(escaped, i + 8) : -1;
    if (lo >= 0xDC00 && lo <= 0xDFFF) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "\\U%08lx", static_cast<unsigned long>(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)));
      out += buf;
      i += 11;
    } else {
      out.append(escaped, i, 2);  // an escape of its own: never read its second character as a backslash
      ++i;
    }
  }
}
}  // namespace

const std::string& bootstrap_source() {
  static const std::string source(kBootstrap);
  return source;
}

BootstrapParts bootstrap_parts() {
  const std::string& source = bootstrap_source();
  const std::size_t at = source.find("\n# gilhost: cold\n");
  if (at == std::string::npos) return {source, ""};
  BootstrapParts parts;
  parts.hot = source.substr(0, at + 1);
  const auto lines = static_cast<std::size_t>(std::count(parts.hot.begin(), parts.hot.end(), '\n'));
  parts.cold = std::string(lines, '\n') + source.substr(at + 1);
  return parts;
}

std::uint64_t bootstrap_source_hash() {
  // The text and its closing NUL, hashed by the compiler.
  constexpr std::uint64_t hash = fnv1a64(std::string_view(kBootstrap, sizeof kBootstrap));
  return hash;
}

const std::string& exec_main_source() {
  static const std::string source(kExecMain);
  return source;
}

std::string to_python_literal(const nlohmann::json& v) {
  std::string out;
  switch (v.type()) {
    case nlohmann::json::value_t::null: return "None";
    case nlohmann::json::value_t::boolean: return v.get<bool>() ? "True" : "False";
    case nlohmann::json::value_t::string: append_json_string_as_python(out, v.get<std::string>()); return out;
    case nlohmann::json::value_t::array: {
      out = "[";
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (i) out += ", ";
        out += to_python_literal(v[i]);
      }
      return out + "]";
    }
    case nlohmann::json::value_t::object: {
      out = "{";
      bool first = true;
      for (const auto& [key, item] : v.items()) {
        if (!first) out += ", ";
        first = false;
        append_json_string_as_python(out, key);
        out += ": " + to_python_literal(item);
      }
      return out + "}";
    }
    case nlohmann::json::value_t::number_float: {
      double d = v.get<double>();
      if (d != d) return "float('nan')";
      if (std::isinf(d)) return d > 0 ? "float('inf')" : "-float('inf')";  // dump() would write null
      return v.dump();
    }
    default: return v.dump();  // integers
  }
}

std::string spec_statement(const nlohmann::json& spec) { return "_spec = " + to_python_literal(spec) + "\n"; }

std::string bootstrap_program(const nlohmann::json& spec) {
  return spec_statement(spec) + bootstrap_source() + exec_main_source();
}

}  // namespace gilhost
