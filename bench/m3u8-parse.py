#!/usr/bin/env python3
"""Parse a playlist with the Python m3u8 package (PyPI), the peer of bench-hls-parse.

    m3u8-parse.py FILE               parse once, print the segment count (for bench/measure.py)
    m3u8-parse.py --runs N FILE      also time N parses in process and print a JSON line
"""
import json
import sys
import time

import m3u8


def main() -> int:
    args = sys.argv[1:]
    runs = 0
    if len(args) >= 2 and args[0] == "--runs":
        runs, args = int(args[1]), args[2:]
    path = args[0]
    with open(path, encoding="utf-8") as playlist:
        text = playlist.read()
    if runs == 0:
        print(len(m3u8.loads(text).segments))
        return 0
    times = []
    count = 0
    for _ in range(runs):
        start = time.perf_counter()
        count = len(m3u8.loads(text).segments)
        times.append(time.perf_counter() - start)
    times.sort()
    size = len(text.encode("utf-8"))
    print(json.dumps({
        "label": "m3u8 in process", "segments": count, "bytes": size, "runs": runs,
        "parse_min_s": round(times[0], 4), "parse_median_s": round(times[len(times) // 2], 4),
        "mb_per_s": round(size / 1e6 / times[0], 1),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
