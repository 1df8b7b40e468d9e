"""gil_status: what kind of build this is and whether the GIL is on right now.

A free-threaded build (sysconfig Py_GIL_DISABLED = 1, e.g. 3.13t) can still run
with the GIL: PYTHON_GIL=1, -X gil=1, or importing an extension module not
marked as free-threading safe turns it back on. So "free-threaded build" and
"GIL enabled now" are separate facts, and both are recorded. Before 3.13 there
is no sys._is_gil_enabled(); the GIL is always on there.

Call mode: gil_status() returns the dict. Main mode (and standalone): prints it
as JSON and hands it to gilhost.result() when run under gilhost.
"""

import os
import sys

try:
    import gilhost
except ImportError:
    gilhost = None


def gil_status():
    import multiprocessing
    import sysconfig

    is_enabled = getattr(sys, "_is_gil_enabled", None)
    affinity = getattr(os, "sched_getaffinity", None)
    uname = getattr(os, "uname", None)
    return {
        "version": "%d.%d.%d" % sys.version_info[:3],
        "version_minor": sys.version_info[1],
        "version_info": list(sys.version_info[:3]) + [sys.version_info[3], sys.version_info[4]],
        "hexversion": sys.hexversion,
        "implementation": sys.implementation.name,
        "cache_tag": sys.implementation.cache_tag,
        "free_threaded": bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
        "gil_enabled": bool(is_enabled()) if is_enabled is not None else True,
        "has_is_gil_enabled": is_enabled is not None,
        # What could have switched the GIL on or off at start-up.
        "python_gil_env": os.environ.get("PYTHON_GIL"),
        "x_gil": sys._xoptions.get("gil"),
        "switch_interval_s": sys.getswitchinterval(),
        "abiflags": getattr(sys, "abiflags", ""),
        "debug_build": hasattr(sys, "gettotalrefcount"),
        "thread_info": {"name": sys.thread_info.name, "lock": sys.thread_info.lock,
                        "version": sys.thread_info.version},
        "executable": sys.executable,
        "prefix": sys.prefix,
        "platform": sys.platform,
        "machine": uname().machine if uname else None,
        "cpu_count": os.cpu_count(),
        "usable_cpus": len(affinity(0)) if affinity else None,
        # Documented: the first start method listed is the platform default
        # (asking for the default itself would fix the context as a side effect).
        "default_start_method": multiprocessing.get_all_start_methods()[0],
        "in_host": bool(getattr(gilhost, "IN_HOST", False)),
    }


def main(argv=None):
    import argparse
    import json

    ap = argparse.ArgumentParser(
        description="Print the build (free-threaded or not) and whether the GIL "
                    "is enabled now, as JSON.")
    ap.add_argument("--compact", action="store_true", help="one line of JSON")
    a = ap.parse_args(argv)
    status = gil_status()
    print(json.dumps(status, indent=None if a.compact else 2))
    if gilhost is not None:
        gilhost.result(status)
    return 0


if __name__ == "__main__":
    sys.exit(main())
