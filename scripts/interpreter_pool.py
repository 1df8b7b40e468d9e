"""The InterpreterPoolExecutor (3.14+, PEP 734) that cpu_bound, four_ways and primes time.

A task function that uses only builtins travels to a worker interpreter without its module; any other
is pickled by reference (module.function), and the worker must import its module -- which a new
interpreter's sys.path does not find by itself. So every worker first adds this folder, where the
experiment scripts live, to its sys.path.
"""

import os


def interpreter_pool(workers):
    from concurrent.futures import InterpreterPoolExecutor

    here = os.path.dirname(os.path.abspath(__file__))
    return InterpreterPoolExecutor(
        max_workers=workers, initializer=exec,
        initargs=("import sys; sys.path.insert(0, %r)" % here,))
