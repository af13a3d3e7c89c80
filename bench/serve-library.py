#!/usr/bin/env python3
"""Start `streamkit serve` on a home and time its library page, for bench/scale.sh's library section.

    bench/serve-library.py STREAMKIT HOME SIZE [SECTION]

Prints one JSON line: the time to serve's ready line (its token), the first page (asked at once,
while serve's own first read of the items may still run), the median of ten pages after that, the
page's size, the median of ten `/api/tasks` answers and serve's peak RSS (VmHWM) at the end.
SECTION (default `library`) and SIZE label the line.
"""
import json
import socket
import statistics
import subprocess
import sys
import time
import urllib.request


def main() -> None:
    streamkit, home, packages = sys.argv[1], sys.argv[2], int(sys.argv[3])
    section = sys.argv[4] if len(sys.argv) > 4 else "library"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    start = time.monotonic()
    server = subprocess.Popen(
        [streamkit, "serve", "--home", home, "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        token = None
        while token is None:
            line = server.stdout.readline()
            if not line:
                raise SystemExit("serve exited before it was ready")
            if line.startswith("Token:"):
                token = line.split()[1]
        ready = time.monotonic() - start

        def page(path: str = "/") -> tuple[float, int]:
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}{path}", headers={"Authorization": f"Bearer {token}"})
            began = time.monotonic()
            body = urllib.request.urlopen(request, timeout=120).read()
            return time.monotonic() - began, len(body)

        first, size = page()
        warm = []
        for _ in range(10):
            warm.append(page()[0])
            time.sleep(0.1)
        api = [page("/api/tasks")[0] for _ in range(10)]
        with open(f"/proc/{server.pid}/status") as status:
            peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(json.dumps({
        "section": section, "size": packages, "label": "serve", "ready_s": round(ready, 4),
        "first_page_s": round(first, 4), "warm_page_s": round(statistics.median(warm), 4),
        "page_bytes": size, "api_tasks_s": round(statistics.median(api), 4), "max_rss_mb": round(peak / 1024, 1)}))


if __name__ == "__main__":
    main()
