#!/usr/bin/env bash
# The caching proxy against nginx serving the file directly, side by side in one run, on 127.0.0.1.
#
#   bench/media-cache.sh [ROUNDS]        (default: 3 rounds unthrottled; the 50 MB/s pair runs once)
#   OUT_DIR=/dev/shm bench/media-cache.sh
#   CACHE_LIMIT=8G bench/media-cache.sh  # a cap that keeps every copy (default: the product's, 1 GiB)
#   STREAMKIT=/path/to/streamkit bench/media-cache.sh   # that binary, not a release build of this tree
#   COMPARE=/path/to/other/streamkit bench/media-cache.sh  # also that binary's cold reads, alternated
#   DROP_CACHES=1 bench/media-cache.sh   # the page cache dropped before every whole-file read (root)
#
# One 1 GiB random file, served by nginx on two ports: one unthrottled, one limited to 50 MB/s
# (limit_rate 50000000, per connection, as a fast network would carry it). `streamkit serve`
# (release build, its own STREAMKIT_HOME, the default cache cap unless CACHE_LIMIT is set)
# proxies it. The file is hard-linked under a new name for every cold read: the cache keys by URL,
# so each name starts cold without clearing the cache of the running server; at the default cap
# each cold read evicts the previous copy, as a full cache does. With CACHE_LIMIT=8G every copy
# stays, and the page cache grows by 1 GiB at every cold read: on a VM, into guest memory the host
# may not have backed yet (first touches cost ~10 us a page on the Firecracker machines here).
# curl reads to /dev/null:
#
# 1. 50 MB/s origin: curl from nginx directly, then curl through /proxy/file cold.
#    Target: cold >= 0.95x direct.
# 2. Unthrottled origin, ROUNDS rounds of: curl from nginx directly, `curl -o FILE` from nginx
#    into the home's filesystem (the bytes written where the cache writes them), curl through the
#    proxy cold, curl through the proxy warm (served from the cache), curl from nginx again.
#    Targets: cold >= 0.5x direct; cold as fast as `curl -o FILE` (1.3-1.7x when last measured);
#    warm >= 0.8x nginx.
#    With COMPARE, a second server (that binary, its own home and cache) reads each round's file
#    cold too, before the first server in odd rounds and after it in even ones, so that both
#    builds see the same machine within minutes of each other.
# 3. Time to first byte: 40 requests of 64 KiB at offsets 16 MiB apart in a fresh name, each
#    directly and then through the proxy cold (alternating), and through the proxy warm. Target:
#    median added TTFB (proxy cold - direct) under 5 ms.
#
# Each whole-file read starts after a `sync`, so that no earlier read's writeback runs during it.
# Every curl is measured by bench/measure.py (GNU time: wall, CPU, peak RSS) and reports its own
# throughput and time to first byte (-w). The server's CPU time for each run is read from
# /proc/PID/stat before and after. The origin's access log counts the requests the proxy made.
# Every process started here is stopped by its pid; nothing leaves 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/streamkit-bench-cache.XXXXXX")
data=${OUT_DIR:-$work}/bench-media-cache-data
mkdir -p "$work/www" "$work/nginx/temp" "$work/home" "$data"
chmod 755 "$work" "$work/www"  # nginx workers may run as nobody
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work" "$data"
}
trap cleanup EXIT

command -v curl >/dev/null || { echo "curl is not installed (apt-get install curl)" >&2; exit 1; }
nginx=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$nginx" ] || { echo "nginx is not installed (apt-get install nginx-light)" >&2; exit 1; }

if [ -n "${STREAMKIT:-}" ]; then
    streamkit=$STREAMKIT  # a given binary, such as another commit's release build to compare with
else
    echo "building streamkit (release) ..." >&2
    swift build -c release -Xswiftc -warnings-as-errors --product streamkit >&2
    streamkit=$(swift build -c release --show-bin-path)/streamkit
fi

echo "making 1 GiB of random data ..." >&2
openssl rand -out "$work/www/big.bin" $((1 << 30))
size=$((1 << 30))

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
fast_port=$(free_port)
slow_port=$(free_port)
proxy_port=$(free_port)

cat >"$work/nginx/nginx.conf" <<EOF
daemon off;
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 1024; }
http {
    default_type application/octet-stream;
    log_format bench '\$server_port \$status \$body_bytes_sent "\$http_range" \$request_uri';
    access_log $work/nginx/access.log bench;
    sendfile on;
    tcp_nopush on;
    client_body_temp_path $work/nginx/temp/body;
    proxy_temp_path $work/nginx/temp/proxy;
    fastcgi_temp_path $work/nginx/temp/fastcgi;
    uwsgi_temp_path $work/nginx/temp/uwsgi;
    scgi_temp_path $work/nginx/temp/scgi;
    server { listen 127.0.0.1:$fast_port; root $work/www; }
    server { listen 127.0.0.1:$slow_port; root $work/www; limit_rate 50000000; }
}
EOF

wait_for_port() {
    for _ in $(seq 1 500); do
        python3 -c "import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(('127.0.0.1',$1)))" && return 0
        sleep 0.02
    done
    echo "nothing listens on port $1" >&2
    return 1
}

echo "load before: $(uptime)" >&2
"$nginx" -p "$work/nginx" -c "$work/nginx/nginx.conf" -e "$work/nginx/error.log" &
pids+=($!)
limit_args=()
[ -n "${CACHE_LIMIT:-}" ] && limit_args=(--cache-limit "$CACHE_LIMIT")
echo "cache cap: ${CACHE_LIMIT:-the default}" >&2
STREAMKIT_HOME="$work/home" "$streamkit" serve --port "$proxy_port" "${limit_args[@]}" \
    >"$work/serve.out" 2>&1 &
server=$!
pids+=($server)
if [ -n "${COMPARE:-}" ]; then
    compare_port=$(free_port)
    mkdir -p "$work/home-compare"
    STREAMKIT_HOME="$work/home-compare" "$COMPARE" serve --port "$compare_port" "${limit_args[@]}" \
        >"$work/serve-compare.out" 2>&1 &
    compare_server=$!
    pids+=($compare_server)
    wait_for_port "$compare_port"
fi
wait_for_port "$fast_port"
wait_for_port "$slow_port"
wait_for_port "$proxy_port"

# The server's CPU seconds so far (user + system), from /proc: the compare server's for its reads.
measured_server=$server
server_cpu() { python3 -c "
import os, sys
fields = open('/proc/$measured_server/stat').read().rsplit(')', 1)[1].split()
print((int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK'))"; }

encode() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }
proxied() { echo "http://127.0.0.1:$proxy_port/proxy/file?url=$(encode "$1")"; }

results="$work/results.jsonl"
: >"$results"

# read LABEL URL [RANGE]: one curl to /dev/null (to $OUTPUT when set), measured; appends a JSON line.
read_url() {
    local label=$1 url=$2 range=${3:-}
    local before after output measured written
    before=$(server_cpu)
    local args=(-s -o "${OUTPUT:-/dev/null}" -w '%{http_code} %{size_download} %{time_starttransfer} %{time_total}\n')
    [ -n "$range" ] && args+=(-r "$range")
    # curl's -w line comes first, then measure.py's JSON line.
    output=$(bench/measure.py --label "$label" -- curl "${args[@]}" "$url")
    written=$(head -1 <<<"$output")
    measured=$(tail -1 <<<"$output")
    after=$(server_cpu)
    python3 - "$measured" "$written" "$before" "$after" "$label" "$range" >>"$results" <<'PY'
import json, sys
measured, written, before, after, label, byte_range = sys.argv[1:]
result = json.loads(measured.strip().splitlines()[-1])
status, size, ttfb, total = written.split()
result.update(label=label, range=byte_range, http=int(status), bytes=int(size), ttfb_ms=float(ttfb) * 1000,
              curl_s=float(total), mb_s=int(size) / float(total) / 1e6, server_cpu_s=round(float(after) - float(before), 3))
print(json.dumps(result))
PY
    tail -1 "$results" >&2
}

copy() { ln "$work/www/big.bin" "$work/www/$1"; }
# compare_cold URL: a cold read of URL through the compare server.
compare_cold() {
    local url
    url="http://127.0.0.1:$compare_port/proxy/file?url=$(encode "$1")"
    settle
    measured_server=$compare_server
    read_url fast-cold-compare "$url"
    measured_server=$server
}
# Each whole-file read starts with no dirty pages pending (`sync`): a cold read leaves 1 GiB for
# the kernel to write back, and with several of them queued (past vm.dirty_background_ratio) the
# writeback takes CPU and disk from whichever read comes next. A read pays for its own writes.
# DROP_CACHES=1 also empties the page cache, as on a machine whose cache is cold.
settle() {
    sync
    if [ -n "${DROP_CACHES:-}" ]; then echo 3 >/proc/sys/vm/drop_caches; fi
}

echo "1. origin at 50 MB/s" >&2
copy slow.bin
settle
read_url slow-direct "http://127.0.0.1:$slow_port/slow.bin"
settle
read_url slow-cold "$(proxied "http://127.0.0.1:$slow_port/slow.bin")"

echo "2. unthrottled origin, $rounds rounds" >&2
for round in $(seq 1 "$rounds"); do
    copy "fast$round.bin"
    origin="http://127.0.0.1:$fast_port/fast$round.bin"
    settle
    read_url fast-direct "$origin"
    settle
    OUTPUT="$work/home/curl-copy.bin" read_url fast-curl-file "$origin"
    rm -f "$work/home/curl-copy.bin"
    if [ -n "${COMPARE:-}" ] && [ $((round % 2)) -eq 1 ]; then compare_cold "$origin"; fi
    settle
    read_url fast-cold "$(proxied "$origin")"
    if [ -n "${COMPARE:-}" ] && [ $((round % 2)) -eq 0 ]; then compare_cold "$origin"; fi
    settle
    read_url fast-warm "$(proxied "$origin")"
    settle
    read_url fast-nginx "$origin"
done

echo "3. time to first byte" >&2
copy ttfb.bin
settle
origin="http://127.0.0.1:$fast_port/ttfb.bin"
for index in $(seq 0 39); do
    first=$((index * (16 << 20) + 4096))
    read_url ttfb-direct "$origin" "$first-$((first + 65535))"
    read_url ttfb-cold "$(proxied "$origin")" "$first-$((first + 65535))"
done
for index in $(seq 0 39); do
    first=$((index * (16 << 20) + 4096))
    read_url ttfb-warm "$(proxied "$origin")" "$first-$((first + 65535))"
done
echo "load after: $(uptime)" >&2

kill -INT "$server"
wait "$server" || true
STREAMKIT_HOME="$work/home" "$streamkit" cache list >"$work/cache-list.txt"

python3 - "$results" "$work/nginx/access.log" "$slow_port" "$fast_port" "$size" "$work/cache-list.txt" <<'PY'
import json, statistics, sys
results, log, slow_port, fast_port, size, listing = sys.argv[1:]
size = int(size)
runs = {}
for line in open(results):
    run = json.loads(line)
    runs.setdefault(run["label"], []).append(run)
for label, group in runs.items():
    for run in group:
        if run["http"] not in (200, 206) or (not run["range"] and run["bytes"] != size):
            sys.exit(f"{label}: HTTP {run['http']}, {run['bytes']} bytes")
def med(label, key):
    return statistics.median(run[key] for run in runs[label])

print(f"page cache dropped before each whole-file read: {'yes' if __import__('os').environ.get('DROP_CACHES') else 'no'}")
print("| read (1 GiB, curl to /dev/null) | MB/s (median) | runs (MB/s) | TTFB | curl CPU | server CPU |")
print("| --- | --- | --- | --- | --- | --- |")
names = {
    "slow-direct": "nginx at 50 MB/s, direct", "slow-cold": "proxy, cold, origin at 50 MB/s",
    "fast-direct": "nginx unthrottled, direct", "fast-curl-file": "nginx unthrottled, `curl -o FILE` beside the cache",
    "fast-cold": "proxy, cold, origin unthrottled",
    "fast-warm": "proxy, warm (from the cache)", "fast-nginx": "nginx unthrottled, again",
    "fast-cold-compare": "COMPARE build's proxy, cold, origin unthrottled",
}
for label, name in names.items():
    if label not in runs:
        continue
    each = ", ".join("%.0f" % run["mb_s"] for run in runs[label])
    print(f"| {name} | {med(label, 'mb_s'):.1f} | {each} "
          f"| {med(label, 'ttfb_ms'):.2f} ms | {med(label, 'cpu_s'):.2f} s | {med(label, 'server_cpu_s'):.2f} s |")
print()
slow = med("slow-cold", "mb_s") / med("slow-direct", "mb_s")
cold = med("fast-cold", "mb_s") / med("fast-direct", "mb_s")
nginx = statistics.median([r["mb_s"] for r in runs["fast-direct"] + runs["fast-nginx"]])
warm = med("fast-warm", "mb_s") / nginx
direct_ttfb, cold_ttfb, warm_ttfb = med("ttfb-direct", "ttfb_ms"), med("ttfb-cold", "ttfb_ms"), med("ttfb-warm", "ttfb_ms")
pairs = [c["ttfb_ms"] - d["ttfb_ms"] for d, c in zip(runs["ttfb-direct"], runs["ttfb-cold"])]
print("| figure | measured | target |")
print("| --- | --- | --- |")
print(f"| cold / direct, origin at 50 MB/s | {slow:.3f} | >= 0.95 |")
print(f"| cold / direct, unthrottled | {cold:.3f} | >= 0.5 |")
print(f"| cold / `curl -o FILE` on the cache's filesystem | {med('fast-cold', 'mb_s') / med('fast-curl-file', 'mb_s'):.3f} | >= 1.0 (1.3-1.7 before) |")
if "fast-cold-compare" in runs:
    other = med("fast-cold-compare", "mb_s") / med("fast-direct", "mb_s")
    each = ", ".join("%.2f" % (a["mb_s"] / b["mb_s"]) for a, b in zip(runs["fast-cold"], runs["fast-cold-compare"]))
    print(f"| cold / direct, unthrottled, COMPARE build | {other:.3f} | |")
    print(f"| cold, this build / COMPARE build, per round | {each} | |")
print(f"| warm / nginx (median of both nginx reads per round) | {warm:.3f} | >= 0.8 |")
print(f"| added TTFB, cold 64 KiB ranges (median of {len(pairs)} pairs; direct {direct_ttfb:.2f} ms, "
      f"proxy cold {cold_ttfb:.2f} ms) | {statistics.median(pairs):.2f} ms (p90 {sorted(pairs)[int(len(pairs) * 0.9)]:.2f} ms) | < 5 ms |")
print(f"| added TTFB, warm 64 KiB ranges (proxy warm {warm_ttfb:.2f} ms) | {warm_ttfb - direct_ttfb:.2f} ms | |")
print(f"| added TTFB, whole-file cold reads (median) | "
      f"{med('fast-cold', 'ttfb_ms') - med('fast-direct', 'ttfb_ms'):.2f} ms unthrottled, "
      f"{med('slow-cold', 'ttfb_ms') - med('slow-direct', 'ttfb_ms'):.2f} ms at 50 MB/s | < 5 ms |")
print()
# What the proxy asked the origin for: requests, and bytes sent per file name.
requests = {}
for line in open(log):
    port, status, sent, byte_range, uri = line.split(" ", 4)
    key = (port, uri.strip())
    count, total = requests.get(key, (0, 0))
    requests[key] = (count + 1, total + int(sent))
print("origin requests per file (direct reads included):")
for (port, uri), (count, total) in sorted(requests.items()):
    print(f"  {uri:12} port {'50MB/s' if port == slow_port else 'fast'}: {count} requests, {total / 2**20:,.1f} MiB sent")
print()
print("cache afterwards:")
print(open(listing).read().rstrip())
PY
