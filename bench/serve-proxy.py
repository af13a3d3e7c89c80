#!/usr/bin/env python3
"""The first proxied request of a `streamkit serve` process against later ones, for bench/scale.sh.

    bench/serve-proxy.py STREAMKIT HOME ORIGIN [PROCESSES]

ORIGIN serves a small file under every /seg/NAME (scale.sh's nginx). For each of PROCESSES fresh
serve processes (5 by default): once serve prints its token, the time to the first byte of
/proxy/file?url=ORIGIN/seg/... on a new connection, first for the process's first request and
then for 20 more, each a URL not cached yet (a cold miss, as a player's first request is), and
the same 20 straight from the origin. Prints one JSON line per process.
"""
import http.client
import json
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse
import uuid


def first_byte(port: int, target: str, headers: dict[str, str]) -> float:
    began = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", target, headers=headers)
    response = connection.getresponse()
    response.read(1)
    elapsed = time.perf_counter() - began
    response.read()
    connection.close()
    if response.status != 200:
        raise SystemExit(f"{target}: HTTP {response.status}")
    return elapsed


def main() -> None:
    streamkit, home, origin = sys.argv[1], sys.argv[2], sys.argv[3]
    processes = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    origin_port = urllib.parse.urlsplit(origin).port
    for run in range(processes):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
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
            auth = {"Authorization": f"Bearer {token}"}

            def proxied() -> float:
                url = f"{origin}/seg/{uuid.uuid4().hex}.ts"
                return first_byte(port, "/proxy/file?url=" + urllib.parse.quote(url, safe=""), auth)

            first = proxied()
            later = []
            direct = []
            for _ in range(20):
                time.sleep(0.02)
                later.append(proxied())
                direct.append(first_byte(origin_port, f"/seg/{uuid.uuid4().hex}.ts", {}))
        finally:
            server.terminate()
            server.wait(timeout=30)
        print(json.dumps({
            "section": "proxy", "size": run + 1, "label": "first proxied request",
            "first_ms": round(first * 1000, 2), "later_median_ms": round(statistics.median(later) * 1000, 2),
            "later_max_ms": round(max(later) * 1000, 2), "direct_median_ms": round(statistics.median(direct) * 1000, 2)}),
            flush=True)


if __name__ == "__main__":
    main()
