"""The no-op case of tests/bench/bench.py's cost figures (1, 2, 3c), alone in its file: a no-op run imports
as little as a script can hold, since `python -c pass`, the side it is compared with, imports no script.
(From bench_cases.py, its dozen other functions cost each run ~0.08 ms more to import; docs/performance.md.)

    python noop_case.py   # as `python script.py` runs it: what a no-op run under gilhost replaces
"""


def noop(**_):
    return None


if __name__ == "__main__":
    noop()
