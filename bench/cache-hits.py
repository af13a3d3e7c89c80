#!/usr/bin/env python3
"""Cache hits through `streamkit serve`'s proxy over a large cache, for bench/scale.sh.

    bench/cache-hits.py STREAMKIT HOME ENTRIES [HITS]

HOME's cache holds ENTRIES entries written by scale.sh (URL http://127.0.0.1:9/fI.ts, 2,000 bytes of
which ten spans of 100 are cached, the first at byte 0); each read asks for bytes 0-99. Nothing
listens on port 9, so every byte must come from the cache. One serve
process; HITS (300 by default) entries picked at random are each read through
/proxy/file?url=... on a new connection twice: the first read of an entry since the process
started (the store loads it from the index and checks its file), then again (it is in memory or
loaded again). Prints one JSON line: the time to the first byte, median and 90th percentile, of
first reads and of second reads, and serve's start-up (process start to its token).
"""
import http.client
import json
import random
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse


def first_byte(port: int, target: str, headers: dict[str, str]) -> float:
    began = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", target, headers=dict(headers, Range="bytes=0-99"))
    response = connection.getresponse()
    response.read(1)
    elapsed = time.perf_counter() - began
    body = response.read()
    connection.close()
    if response.status != 206 or len(body) != 99:
        raise SystemExit(f"{target}: HTTP {response.status}, {len(body) + 1} bytes")
    return elapsed


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def main() -> None:
    streamkit, home, entries = sys.argv[1], sys.argv[2], int(sys.argv[3])
    hits = int(sys.argv[4]) if len(sys.argv) > 4 else 300
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    began = time.perf_counter()
    server = subprocess.Popen(
        [streamkit, "serve", "--home", home, "--port", str(port), "--proxy-allow", "127.0.0.1"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        token = None
        while token is None:
            line = server.stdout.readline()
            if not line:
                raise SystemExit("serve exited before it was ready")
            if line.startswith("Token:"):
                token = line.split()[1]
        started = time.perf_counter() - began
        auth = {"Authorization": f"Bearer {token}"}
        picked = random.Random(entries).sample(range(entries), hits)

        def read(index: int) -> float:
            url = f"http://127.0.0.1:9/f{index}.ts"
            return first_byte(port, "/proxy/file?url=" + urllib.parse.quote(url, safe=""), auth)

        first = [read(index) for index in picked]
        second = [read(index) for index in picked]
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(json.dumps({
        "section": "cache", "size": entries, "label": "cache hit through the proxy",
        "serve_start_s": round(started, 3),
        "first_median_ms": round(statistics.median(first) * 1000, 3),
        "first_p90_ms": round(percentile(first, 0.9) * 1000, 3),
        "second_median_ms": round(statistics.median(second) * 1000, 3),
        "second_p90_ms": round(percentile(second, 0.9) * 1000, 3)}), flush=True)


if __name__ == "__main__":
    main()
