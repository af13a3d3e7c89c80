#!/usr/bin/env python3
"""Run a command and report its wall time, CPU time and peak RSS as one JSON line.

    bench/measure.py [--label NAME] -- COMMAND [ARGS...]

Shared by every benchmark script, so that StreamKit and its peers are measured the same way:
wall time from a monotonic clock, CPU time (user + system) and peak RSS of the command and all
its children from wait4(2). The exit status is passed through in the JSON, not as ours.
"""
import json
import os
import subprocess
import sys
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
    start = time.monotonic()
    process = subprocess.Popen(args)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - start
    result = {
        "label": label or os.path.basename(args[0]),
        "wall_s": round(wall, 4),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 4),
        "max_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "status": os.waitstatus_to_exitcode(status),
    }
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
