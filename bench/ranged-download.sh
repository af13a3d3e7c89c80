#!/usr/bin/env bash
# Range connections benchmark: `streamkit download -j 8` against `aria2c -x 8 -s 8`, side by
# side in one run, on 127.0.0.1.
#
#   bench/ranged-download.sh                  # 256 MiB, 2 rounds
#   SIZE_MB=1024 ROUNDS=3 bench/ranged-download.sh
#   STREAMKIT_LINK=dynamic bench/ranged-download.sh   # the toolchain's shared Swift libraries
#
# 1. Throttled: nginx sends at most 4 MiB/s per connection (limit_rate 4m), so 8 connections
#    have a physical limit of 32 MiB/s; wall time against SIZE / 32 MiB/s. Target: <= 1.03x the
#    limit, never slower than aria2 beyond noise.
# 2. Unthrottled (same nginx, a location without limit_rate): CPU seconds per GiB against
#    aria2's (target: no more), and peak RSS (target < 40 MB).
# The issue asks for 1 GiB; the default is 256 MiB to keep a throttled run at 8 s (SIZE_MB=1024
# gives the full size). Every output is checked by SHA-256 and deleted.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-2}
size_mb=${SIZE_MB:-256}
work=$(mktemp -d "${TMPDIR:-/tmp}/streamkit-bench-ranged.XXXXXX")
out_dir=${OUT_DIR:-$work/out}
mkdir -p "$work/www" "$work/temp" "$out_dir"
# `streamkit download` records its task in the home's queue: a home of the run's own.
export STREAMKIT_HOME="$work/home"
chmod 755 "$work"
nginx_pid=
cleanup() {
    [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
    rm -rf "$work" "$out_dir"/bench-*
}
trap cleanup EXIT

source bench/build-streamkit.sh  # sets $bin (STREAMKIT_LINK=dynamic for the shared Swift runtime)

echo "making $size_mb MiB of random data ..." >&2
openssl rand -out "$work/www/big.bin" $((size_mb << 20))
expected=$(sha256sum "$work/www/big.bin" | cut -d' ' -f1)

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
nginx=$(command -v nginx || echo /usr/sbin/nginx)
cat > "$work/nginx.conf" <<CONF
daemon off;
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 1024; }
http {
    default_type application/octet-stream;
    access_log off;
    sendfile on; tcp_nopush on; keepalive_timeout 65; keepalive_requests 100000;
    client_body_temp_path $work/temp; proxy_temp_path $work/temp; fastcgi_temp_path $work/temp;
    uwsgi_temp_path $work/temp; scgi_temp_path $work/temp;
    server {
        listen 127.0.0.1:$port;
        location /slow/ { alias $work/www/; limit_rate 4m; }
        location /fast/ { alias $work/www/; }
    }
}
CONF
"$nginx" -p "$work" -c "$work/nginx.conf" -e "$work/error.log" &
nginx_pid=$!
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/fast/big.bin" -r 0-0 && break; sleep 0.05; done

base="http://127.0.0.1:$port"
results="$work/results.jsonl"
measure() { bench/measure.py --label "$1" -- "${@:2}" | tee -a "$results" >&2; }
check() {
    local sum
    sum=$(sha256sum "$1" | cut -d' ' -f1)
    [ "$sum" = "$expected" ] || { echo "SHA-256 mismatch for $1" >&2; exit 1; }
    rm -f "$1"
}
aria() {  # aria2c URL OUT
    aria2c -q -x 8 -s 8 -k 1M --file-allocation=none --allow-overwrite=true --auto-file-renaming=false \
        -d "$(dirname "$2")" -o "$(basename "$2")" "$1"
}
export -f aria

echo "load before: $(uptime)" >&2
for round in $(seq "$rounds"); do
    measure streamkit-throttled "$bin/streamkit" download "$base/slow/big.bin" -j 8 -o "$out_dir/bench-sk.bin"
    check "$out_dir/bench-sk.bin"
    measure aria2-throttled bash -c "aria '$base/slow/big.bin' '$out_dir/bench-aria.bin'"
    check "$out_dir/bench-aria.bin"
    measure streamkit-fast "$bin/streamkit" download "$base/fast/big.bin" -j 8 -o "$out_dir/bench-sk.bin"
    check "$out_dir/bench-sk.bin"
    measure aria2-fast bash -c "aria '$base/fast/big.bin' '$out_dir/bench-aria.bin'"
    check "$out_dir/bench-aria.bin"
done
echo "load after: $(uptime)" >&2

python3 - "$results" "$size_mb" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
size_mb = int(sys.argv[2])
by = {}
for row in rows:
    if row["status"] != 0:
        sys.exit(f"{row['label']} exited with {row['status']}")
    by.setdefault(row["label"], []).append(row)
def med(label, key): return statistics.median(r[key] for r in by[label])
print(f"{'run':<22} {'wall s':>8} {'CPU s':>8} {'RSS MB':>8}   (medians of {len(by['aria2-fast'])}, {size_mb} MiB)")
for label in by:
    print(f"{label:<22} {med(label,'wall_s'):>8.2f} {med(label,'cpu_s'):>8.2f} {med(label,'max_rss_mb'):>8.1f}")
limit = size_mb / 32.0
print()
print(f"throttled (8 x 4 MiB/s, physical limit {limit:.2f} s): streamkit {med('streamkit-throttled','wall_s')/limit:.3f}x the limit"
      f" (target <= 1.03), aria2 {med('aria2-throttled','wall_s')/limit:.3f}x")
print(f"  streamkit/aria2 wall: {med('streamkit-throttled','wall_s')/med('aria2-throttled','wall_s'):.3f}")
gib = size_mb / 1024
print(f"unthrottled CPU s/GiB: streamkit {med('streamkit-fast','cpu_s')/gib:.2f}, aria2 {med('aria2-fast','cpu_s')/gib:.2f}"
      f" (ratio {med('streamkit-fast','cpu_s')/med('aria2-fast','cpu_s'):.2f}, target <= 1)")
print(f"unthrottled wall: streamkit {med('streamkit-fast','wall_s'):.2f} s, aria2 {med('aria2-fast','wall_s'):.2f} s")
print(f"peak RSS: streamkit {max(max(r['max_rss_mb'] for r in by[l]) for l in ('streamkit-throttled','streamkit-fast')):.1f} MB"
      f" (target < 40), aria2 {max(max(r['max_rss_mb'] for r in by[l]) for l in ('aria2-throttled','aria2-fast')):.1f} MB")
PY
