#!/usr/bin/env python3
"""Run a command and report its wall time, CPU time and peak RSS as one JSON line.

    bench/measure.py [--label NAME] -- COMMAND [ARGS...]

Shared by every benchmark script, so that StreamKit and its peers are measured the same way:
wall time, CPU time (user + system) and peak RSS of the command and its waited-for children,
as GNU time (Debian package `time`) reads them from wait4(2). GNU time is used rather than
forking from Python because Linux counts the RSS a process had before exec: a Python parent
would add its own ~14 MB to every figure. GNU time prints CPU seconds to two decimals, though,
which is 4% of a 0.25 s run; the CPU time is therefore read from this script's own wait4(2) of
GNU time, in microseconds, and the wall time from a monotonic clock around it; both include GNU
time's own start and exit (about 1.5 ms of CPU here). The exit status is passed through in the
JSON.
"""
import json
import os
import subprocess
import sys
import tempfile
import time


def main() -> int:
    args = sys.argv[1:]
    label = None
    if len(args) >= 2 and args[0] == "--label":
        label, args = args[1], args[2:]
    if args and args[0] == "--":
        args = args[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 64
    with tempfile.NamedTemporaryFile("r") as report:
        started = time.monotonic()
        timer = subprocess.Popen(["/usr/bin/time", "-q", "-f", "%e %U %S %M %x", "-o", report.name, *args])
        _, _, usage = os.wait4(timer.pid, 0)
        wall = time.monotonic() - started
        timer.returncode = 0  # reaped above
        fields = report.read().split()
    _, _, _, rss_kb, status = fields[-5:]
    result = {
        "label": label or os.path.basename(args[0]),
        "wall_s": round(wall, 4),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 4),
        "max_rss_mb": round(int(rss_kb) / 1024, 1),
        "status": int(status),
    }
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
