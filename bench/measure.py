#!/usr/bin/env python3
"""Run a command and report its wall time, CPU time and peak RSS as one JSON line.

    bench/measure.py [--label NAME] -- COMMAND [ARGS...]

Shared by every benchmark script, so that StreamKit and its peers are measured the same way:
wall time, CPU time (user + system) and peak RSS of the command and its waited-for children,
as GNU time (Debian package `time`) reads them from wait4(2). GNU time is used rather than
forking from Python because Linux counts the RSS a process had before exec: a Python parent
would add its own ~14 MB to every figure. The exit status is passed through in the JSON.
"""
import json
import os
import subprocess
import sys
import tempfile


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
        subprocess.run(["/usr/bin/time", "-q", "-f", "%e %U %S %M %x", "-o", report.name, *args])
        fields = report.read().split()
    wall, user, system, rss_kb, status = fields[-5:]
    result = {
        "label": label or os.path.basename(args[0]),
        "wall_s": float(wall),
        "cpu_s": round(float(user) + float(system), 3),
        "max_rss_mb": round(int(rss_kb) / 1024, 1),
        "status": int(status),
    }
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
