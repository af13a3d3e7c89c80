#!/usr/bin/env bash
# Static files from nginx and from `streamkit serve`, side by side in one run, measured with wrk.
#
#   bench/http-serve.sh [SECONDS_PER_RUN] [ROUNDS]     (defaults: 10 s, 3 rounds)
#
# Both servers serve the same directory on 127.0.0.1: 16 segments of 1 MiB and 64 files of
# 4 KiB, requested in rotation by 64 keep-alive connections (wrk -t2 -c64). Runs alternate
# nginx / streamkit, ROUNDS times for each size; the table reports the medians and the ratios the
# issue sets (requests/s >= 0.8x nginx for 1 MiB, >= 0.5x for 4 KiB; p99 latency <= 2x nginx's).
# Then each server is run under bench/measure.py while 256 connections hammer it, for peak RSS
# (target for streamkit: under 40 MB). nginx runs with as many workers as streamkit has event
# loops (one per core, at most 4), sendfile and tcp_nopush on, no access log.
# Every process started here is stopped by its pid; nothing leaves 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-10}
rounds=${2:-3}
work=bench/work/http-serve
cores=$(nproc)
loops=$((cores < 4 ? cores : 4))

command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 1; }
nginx=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$nginx" ] || { echo "nginx is not installed (apt-get install nginx-light)" >&2; exit 1; }

echo "building streamkit (release)..." >&2
swift build -c release -Xswiftc -warnings-as-errors --product streamkit >&2
streamkit=.build/release/streamkit

rm -rf "$work"
mkdir -p "$work/library/bench" "$work/nginx/logs" "$work/nginx/temp"
for i in $(seq -w 0 15); do head -c $((1 << 20)) /dev/urandom >"$work/library/bench/seg$i.ts"; done
for i in $(seq -w 0 63); do head -c 4096 /dev/urandom >"$work/library/bench/small$i.ts"; done

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
nginx_port=$(free_port)
streamkit_port=$(free_port)

cat >"$work/nginx/nginx.conf" <<EOF
daemon off;
worker_processes $loops;
pid $PWD/$work/nginx/nginx.pid;
error_log $PWD/$work/nginx/logs/error.log;
events { worker_connections 4096; }
http {
    types { video/mp2t ts; application/vnd.apple.mpegurl m3u8; }
    default_type application/octet-stream;
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_timeout 65;
    keepalive_requests 1000000;
    client_body_temp_path $PWD/$work/nginx/temp/body;
    proxy_temp_path $PWD/$work/nginx/temp/proxy;
    fastcgi_temp_path $PWD/$work/nginx/temp/fastcgi;
    uwsgi_temp_path $PWD/$work/nginx/temp/uwsgi;
    scgi_temp_path $PWD/$work/nginx/temp/scgi;
    server {
        listen 127.0.0.1:$nginx_port;
        location /library/ { alias $PWD/$work/library/; }
    }
}
EOF

pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

wait_for_port() {
    for _ in $(seq 1 500); do
        python3 -c "import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(('127.0.0.1',$1)))" && return 0
        sleep 0.02
    done
    echo "nothing listens on port $1" >&2
    return 1
}

# A wrk script that requests the files of one size in rotation.
rotation() {
    local prefix=$1 count=$2
    cat <<EOF
local index = 0
request = function()
    index = (index + 1) % $count
    return wrk.format("GET", string.format("/library/bench/$prefix%02d.ts", index))
end
EOF
}
rotation seg 16 >"$work/segments.lua"
rotation small 64 >"$work/small.lua"

# Prints "requests_per_second p99_milliseconds" for one wrk run.
run_wrk() {
    local port=$1 script=$2 connections=$3 duration=$4
    wrk -t2 -c"$connections" -d"${duration}s" --latency -s "$script" "http://127.0.0.1:$port/" |
        python3 -c '
import re, sys
text = sys.stdin.read()
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
value, unit = re.search(r"\s99%\s+([\d.]+)(us|ms|s)", text).groups()
p99 = float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]
errors = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
if errors: sys.exit("wrk saw %s error responses" % errors.group(1))
print(rps, p99)'
}

echo "load before: $(uptime)" >&2
"$nginx" -p "$PWD/$work/nginx" -c "$PWD/$work/nginx/nginx.conf" -e "$PWD/$work/nginx/logs/error.log" &
pids+=($!)
"$streamkit" serve --root "$work/library" --port "$streamkit_port" >"$work/streamkit.out" 2>&1 &
pids+=($!)
wait_for_port "$nginx_port"
wait_for_port "$streamkit_port"

results="$work/results.txt"
: >"$results"
for round in $(seq 1 "$rounds"); do
    for size in segments small; do
        for server in nginx streamkit; do
            port=$([ $server = nginx ] && echo "$nginx_port" || echo "$streamkit_port")
            echo "round $round: $size from $server" >&2
            echo "$size $server $(run_wrk "$port" "$work/$size.lua" 64 "$seconds")" >>"$results"
        done
    done
done
cleanup
pids=()
echo "load after throughput runs: $(uptime)" >&2

# Peak RSS with 256 connections open, each server measured by GNU time through measure.py. The
# server is the grandchild of measure.py (measure.py -> time -> server), stopped by its pid.
rss_port=$(free_port)
sed "s/listen 127.0.0.1:$nginx_port;/listen 127.0.0.1:$rss_port;/" "$work/nginx/nginx.conf" >"$work/nginx/rss.conf"
measure_rss_nginx() {
    bench/measure.py --label nginx-256 -- "$nginx" -p "$PWD/$work/nginx" -c "$PWD/$work/nginx/rss.conf" \
        -e "$PWD/$work/nginx/logs/error.log" >"$work/nginx-256.json" &
    local measure=$!
    wait_for_port "$rss_port"
    run_wrk "$rss_port" "$work/small.lua" 256 5 >"$work/nginx-256.wrk"
    local timer master
    timer=$(pgrep -P "$measure")
    master=$(pgrep -P "$timer")
    kill -QUIT "$master"
    wait "$measure"
}
measure_rss_streamkit() {
    bench/measure.py --label streamkit-256 -- "$streamkit" serve --root "$work/library" --port "$rss_port" \
        >"$work/streamkit-256.json" &
    local measure=$!
    wait_for_port "$rss_port"
    run_wrk "$rss_port" "$work/small.lua" 256 5 >"$work/streamkit-256.wrk"
    local timer server
    timer=$(pgrep -P "$measure")
    server=$(pgrep -P "$timer")
    kill -INT "$server"
    wait "$measure"
}
measure_rss_nginx
rss_port=$(free_port)
measure_rss_streamkit
echo "load after: $(uptime)" >&2

python3 - "$results" "$work" "$seconds" "$rounds" <<'EOF'
import json, statistics, sys
results, work, seconds, rounds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
runs = {}
for line in open(results):
    size, server, rps, p99 = line.split()
    runs.setdefault((size, server), []).append((float(rps), float(p99)))
def median(size, server, index):
    return statistics.median(run[index] for run in runs[(size, server)])
names = {"segments": "1 MiB segments", "small": "4 KiB files"}
targets = {"segments": 0.8, "small": 0.5}
print(f"wrk -t2 -c64, {seconds} s per run, median of {rounds} rounds (runs alternate nginx / streamkit)")
print()
print("| files | nginx req/s | streamkit req/s | ratio (target) | nginx p99 | streamkit p99 | p99 ratio (target <= 2) |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for size in ("segments", "small"):
    n_rps, s_rps = median(size, "nginx", 0), median(size, "streamkit", 0)
    n_p99, s_p99 = median(size, "nginx", 1), median(size, "streamkit", 1)
    print(f"| {names[size]} | {n_rps:,.0f} | {s_rps:,.0f} | {s_rps / n_rps:.2f} (>= {targets[size]}) "
          f"| {n_p99:.2f} ms | {s_p99:.2f} ms | {s_p99 / n_p99:.2f} |")
print()
print("every run (req/s, p99 ms):")
for (size, server), values in sorted(runs.items()):
    print(f"  {names[size]:15} {server:9} " + "  ".join(f"{rps:,.0f}/{p99:.2f}" for rps, p99 in values))
print()
print("| server | peak RSS with 256 connections (wrk -c256, 5 s, 4 KiB files) | req/s |")
print("| --- | --- | --- |")
for label in ("nginx-256", "streamkit-256"):
    # measure.py prints its JSON line last; the server's own output may come before it.
    measured = json.loads(open(f"{work}/{label}.json").read().strip().splitlines()[-1])
    rps, _ = open(f"{work}/{label}.wrk").read().split()
    note = " (master and workers, largest process)" if label.startswith("nginx") else " (target < 40 MB)"
    print(f"| {label.split('-')[0]} | {measured['max_rss_mb']} MB{note} | {float(rps):,.0f} |")
EOF
