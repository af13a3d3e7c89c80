#!/usr/bin/env bash
# HTTP client benchmark: streamkit against curl, side by side in one run, on 127.0.0.1.
#
#   bench/http-download.sh            # 3 rounds of each
#   ROUNDS=5 OUT_DIR=/dev/shm bench/http-download.sh
#
# 1. The same 1 GiB file from nginx: `streamkit download URL -o FILE` against `curl -o FILE`,
#    alternating, each output checked by SHA-256. Targets: >= 0.9x curl's throughput at
#    <= 1.5x its CPU time; streamkit's peak RSS under 40 MB.
# 2. 64 concurrent 1 MiB downloads through one client (`bench-http concurrent 64`) against curl
#    run 64 times (64 processes at once), and against one `curl --parallel` process.
# Every figure comes from bench/measure.py (GNU time): wall, CPU (user + system), peak RSS.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/streamkit-bench-http.XXXXXX")
out_dir=${OUT_DIR:-$work/out}
mkdir -p "$work/www" "$work/temp" "$out_dir"
chmod 755 "$work"  # nginx workers run as nobody
nginx_pid=
cleanup() {
    [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
    rm -rf "$work" "$out_dir"/bench-*.bin
}
trap cleanup EXIT

echo "building release ..." >&2
swift build -c release --product streamkit >&2
swift build -c release --product bench-http >&2
bin=$(swift build -c release --show-bin-path)

echo "making 1 GiB and 64 x 1 MiB of random data ..." >&2
openssl rand -out "$work/www/big.bin" $((1 << 30))
for i in $(seq 0 63); do openssl rand -out "$work/www/m$i.bin" $((1 << 20)); done
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
    server { listen 127.0.0.1:$port; location / { root $work/www; } }
}
CONF
"$nginx" -p "$work" -c "$work/nginx.conf" -e "$work/error.log" &
nginx_pid=$!
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/m0.bin" && break; sleep 0.05; done

base="http://127.0.0.1:$port"
results="$work/results.jsonl"
measure() { bench/measure.py --label "$1" -- "${@:2}" | tee -a "$results" >&2; }
check() {
    local sum
    sum=$(sha256sum "$1" | cut -d' ' -f1)
    [ "$sum" = "$expected" ] || { echo "SHA-256 mismatch for $1" >&2; exit 1; }
    rm -f "$1"
}

echo "load before: $(uptime)" >&2
for round in $(seq "$rounds"); do
    measure streamkit-1g "$bin/streamkit" download "$base/big.bin" -o "$out_dir/bench-streamkit.bin"
    check "$out_dir/bench-streamkit.bin"
    measure curl-1g curl -s -o "$out_dir/bench-curl.bin" "$base/big.bin"
    check "$out_dir/bench-curl.bin"
done

urls=()
for i in $(seq 0 63); do urls+=("$base/m$i.bin"); done
printf '%s\n' "${urls[@]}" > "$work/urls.txt"
for round in $(seq "$rounds"); do
    measure streamkit-64x1m "$bin/bench-http" concurrent 64 "${urls[@]}"
    measure curl-64-processes sh -c "xargs -P 64 -n 1 curl -s -o /dev/null < '$work/urls.txt'"
    measure curl-parallel-64 sh -c "curl -s --parallel --parallel-max 64 $(printf -- '-o /dev/null %s ' "${urls[@]}")"
done
echo "load after: $(uptime)" >&2

python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
rows = [row for row in rows if "label" in row]  # bench-http's own report passes through too
by = {}
for row in rows:
    if row["status"] != 0:
        sys.exit(f"{row['label']} exited with {row['status']}")
    by.setdefault(row["label"], []).append(row)
def med(label, key): return statistics.median(r[key] for r in by[label])
print(f"{'run':<20} {'wall s':>8} {'CPU s':>8} {'RSS MB':>8}   (medians of {len(by['curl-1g'])})")
for label in by:
    print(f"{label:<20} {med(label,'wall_s'):>8.2f} {med(label,'cpu_s'):>8.2f} {med(label,'max_rss_mb'):>8.1f}")
gib = 1024
print()
print(f"1 GiB throughput: streamkit {gib / med('streamkit-1g','wall_s'):.0f} MiB/s, curl {gib / med('curl-1g','wall_s'):.0f} MiB/s")
print(f"  throughput ratio streamkit/curl: {med('curl-1g','wall_s') / med('streamkit-1g','wall_s'):.2f}  (target >= 0.90)")
print(f"  CPU ratio streamkit/curl:        {med('streamkit-1g','cpu_s') / med('curl-1g','cpu_s'):.2f}  (target <= 1.50)")
print(f"  streamkit peak RSS:              {max(r['max_rss_mb'] for r in by['streamkit-1g']):.1f} MB  (target < 40)")
for peer in ("curl-64-processes", "curl-parallel-64"):
    print(f"64 x 1 MiB vs {peer}: wall ratio {med(peer,'wall_s') / med('streamkit-64x1m','wall_s'):.2f}x faster, "
          f"CPU ratio {med('streamkit-64x1m','cpu_s') / med(peer,'cpu_s'):.2f}")
PY
