#!/usr/bin/env bash
# Over a network rather than loopback: StreamKit and its peers through bench-relay, a link that
# adds 25 ms each way (50 ms round trip) and paces every connection (these kernels have no netem),
# between the client and nginx. Side by side in one run:
#
#   bench/network.sh                 # every section once
#   ROUNDS=3 SECTIONS="latency rate" bench/network.sh
#
# latency  2,000 HLS segments of about 50 KB, 10 MB/s a connection: `streamkit download` with its
#          defaults against `yt-dlp -N 8`. Target: at most 0.5x yt-dlp's time, at most 16
#          connections open at once.
# rate     1,000 segments of about 200 KB, 2 MB/s a connection: `streamkit download -j 8` against
#          `yt-dlp -N 8`. Target: at most 1.05x the limit of 8 connections at that rate.
# range    a 200 MB file, 4 MB/s a connection: `streamkit download -j 8` against
#          `aria2c -x 8 -s 8`. Target: at most 1.0x aria2's time.
# seek     the first byte of a cold proxied seek (64 KiB at 100 MB into the file, through
#          `streamkit serve`'s /proxy/file) against the same range fetched directly through the
#          link. Target: at most one round trip (50 ms) more.
# Each run gets a relay of its own, which reports the connections it saw. Every package is
# checked against the origin (cmp). Medians of ROUNDS rounds.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-1}
sections=${SECTIONS:-latency rate range seek}
delay_ms=25
work=$(mktemp -d "${TMPDIR:-/tmp}/streamkit-bench-network.XXXXXX")
mkdir -p "$work/www/lat" "$work/www/rate" "$work/temp" "$work/out"
chmod 755 "$work"  # nginx workers run as nobody
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT

ytdlp=$(command -v yt-dlp || echo "$HOME/.local/bin/yt-dlp")
[ -x "$ytdlp" ] || { echo "yt-dlp is missing: pip install --user yt-dlp" >&2; exit 1; }
command -v aria2c > /dev/null || { echo "aria2c is missing: apt-get install aria2" >&2; exit 1; }

source bench/build-streamkit.sh  # sets $bin
swift build -c release --product bench-relay >&2
relay_bin=$(swift build -c release --show-bin-path)/bench-relay

segments() {  # folder, count, kbit/s: one-second TS segments, 20 encoded, the rest hard links
    local folder=$1 count=$2 rate=$3
    ffmpeg -v error -f lavfi -i "testsrc2=size=640x360:rate=25" -t 20 -c:v libx264 -preset ultrafast \
        -b:v "${rate}k" -maxrate "${rate}k" -bufsize "$((rate / 2))k" -g 25 -f hls -hls_time 1 \
        -hls_list_size 0 -hls_segment_filename "$work/temp/$folder-%02d.ts" "$work/temp/$folder.m3u8"
    {
        echo "#EXTM3U"; echo "#EXT-X-VERSION:3"; echo "#EXT-X-TARGETDURATION:1"; echo "#EXT-X-PLAYLIST-TYPE:VOD"
        for i in $(seq 0 $((count - 1))); do
            ln "$work/temp/$(printf '%s-%02d.ts' "$folder" $((i % 20)))" "$work/www/$folder/seg$i.ts"
            echo "#EXTINF:1.000,"; echo "seg$i.ts"
        done
        echo "#EXT-X-ENDLIST"
    } > "$work/www/$folder/index.m3u8"
    echo "$folder: $count segments, mean $(($(cat "$work/www/$folder"/seg*.ts | wc -c) / count)) bytes" >&2
}
echo "making the fixtures ..." >&2
segments lat 2000 380
segments rate 1000 1560
head -c 200000000 /dev/urandom > "$work/www/big.bin"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$work/nginx.conf" <<CONF
daemon off;
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 1024; }
http {
    types { application/vnd.apple.mpegurl m3u8; video/mp2t ts; }
    access_log off;
    sendfile on; tcp_nopush on; keepalive_timeout 65; keepalive_requests 100000;
    client_body_temp_path $work/temp; proxy_temp_path $work/temp; fastcgi_temp_path $work/temp;
    uwsgi_temp_path $work/temp; scgi_temp_path $work/temp;
    server { listen 127.0.0.1:$port; location / { root $work/www; } }
}
CONF
nginx -p "$work" -c "$work/nginx.conf" -e "$work/error.log" > /dev/null 2>&1 &
pids+=($!)
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/lat/index.m3u8" && break; sleep 0.05; done

results="$work/results.jsonl"
relay_port=""
relay_start() {  # bytes a second a connection; sets $relay_port, $relay_pid
    "$relay_bin" "$port" "$delay_ms" "$1" > "$work/relay.out" 2> "$work/relay.err" &
    relay_pid=$!
    for _ in $(seq 500); do [ -s "$work/relay.out" ] && break; sleep 0.02; done
    relay_port=$(head -1 "$work/relay.out")
    [ -n "$relay_port" ] || { echo "the relay did not start: $(cat "$work/relay.err")" >&2; exit 1; }
}
relay_stop() {  # sets $relay_stats to the relay's JSON line (not in a subshell: it waits)
    local status=0
    kill -TERM "$relay_pid"; wait "$relay_pid" || status=$?
    relay_stats=$(tail -1 "$work/relay.out")
    if [ "$status" -ne 0 ] || [ "${relay_stats:0:1}" != "{" ]; then
        echo "the relay failed (exit $status): $(tail -5 "$work/relay.err")" >&2
        exit 1
    fi
}
run() {  # label, rate, command...: one measured run through a relay of its own
    local label=$1 rate=$2
    shift 2
    relay_start "$rate"
    local line
    line=$(bench/measure.py --label "$label" -- "${@//RELAY/127.0.0.1:$relay_port}" 2> "$work/run.err" | tail -1)
    relay_stop
    if ! python3 -c 'import json,sys; sys.exit(json.loads(sys.argv[1])["status"])' "$line"; then
        echo "$label failed: $(tail -5 "$work/run.err")" >&2
    fi
    python3 -c 'import json,sys; a=json.loads(sys.argv[1]); a.update(json.loads(sys.argv[2])); print(json.dumps(a))' \
        "$line" "$relay_stats" | tee -a "$results" >&2
}
verify_package() {  # folder of the origin, count
    local origin=$1 count=$2 media i=0
    media=$(dirname "$(ls "$work"/out/package/*/index.m3u8 | head -1)")
    [ "$(grep -vc '^#' "$media/index.m3u8")" -eq "$count" ] || { echo "package is short" >&2; exit 1; }
    while read -r uri; do
        cmp -s "$media/$uri" "$work/www/$origin/seg$i.ts" || { echo "segment $i differs" >&2; exit 1; }
        i=$((i + 1))
    done < <(grep -v '^#' "$media/index.m3u8")
    rm -rf "$work/out/package" "$work/home"
}
ytdlp_run() {  # label, rate, url, options...
    run "$1" "$2" "$ytdlp" -q --no-progress --fixup never --no-part -o "$work/out/yt.ts" "${@:4}" "$3"
    rm -f "$work/out/yt.ts"
}

echo "load before: $(uptime)" >&2
for _ in $(seq "$rounds"); do
    for section in $sections; do
        case $section in
        latency)
            run latency-streamkit 10000000 "$bin/streamkit" download "http://RELAY/lat/index.m3u8" \
                -o "$work/out/package" --home "$work/home"
            verify_package lat 2000
            run latency-streamkit-j8 10000000 "$bin/streamkit" download "http://RELAY/lat/index.m3u8" -j 8 \
                -o "$work/out/package" --home "$work/home"
            verify_package lat 2000
            ytdlp_run latency-ytdlp-N8 10000000 "http://RELAY/lat/index.m3u8" -N 8
            ;;
        rate)
            run rate-streamkit-j8 2000000 "$bin/streamkit" download "http://RELAY/rate/index.m3u8" -j 8 \
                -o "$work/out/package" --home "$work/home"
            verify_package rate 1000
            ytdlp_run rate-ytdlp-N8 2000000 "http://RELAY/rate/index.m3u8" -N 8
            ;;
        range)
            run range-streamkit-j8 4000000 "$bin/streamkit" download "http://RELAY/big.bin" -j 8 \
                -o "$work/out/big.bin" --home "$work/home"
            cmp "$work/out/big.bin" "$work/www/big.bin"
            rm -rf "$work/out/big.bin" "$work/home"
            run range-aria2-x8 4000000 aria2c -q -x 8 -s 8 --file-allocation=none --allow-overwrite=true \
                -d "$work/out" -o big.bin "http://RELAY/big.bin"
            cmp "$work/out/big.bin" "$work/www/big.bin"
            rm -f "$work/out/big.bin"
            ;;
        seek)
            relay_start 10000000
            python3 - "$bin/streamkit" "$work/seek-home" "http://127.0.0.1:$relay_port/big.bin" >> "$results" <<'PY'
import http.client, json, statistics, subprocess, sys, time, urllib.parse
streamkit, home, origin = sys.argv[1:4]
def first_byte(host, port, path, headers):
    connection = http.client.HTTPConnection(host, port, timeout=30)
    started = time.monotonic()
    connection.request("GET", path, headers=headers)
    response = connection.getresponse()
    response.read(1)
    elapsed = time.monotonic() - started
    response.read()
    connection.close()
    return elapsed, response.status
import socket
with socket.socket() as probe:
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
server = subprocess.Popen([streamkit, "serve", "--home", home, "--port", str(port), "--proxy-allow", "127.0.0.1"],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
try:
    token = None
    while token is None:
        line = server.stdout.readline()
        if not line:
            raise SystemExit("serve exited before it was ready")
        if line.startswith("Token:"):
            token = line.split()[1]
    parsed = urllib.parse.urlsplit(origin)
    direct, proxied = [], []
    for attempt in range(7):
        offset = 100_000_000 + attempt * 1_000_000
        headers = {"Range": f"bytes={offset}-{offset + 65535}"}
        elapsed, status = first_byte(parsed.hostname, parsed.port, parsed.path, headers)
        assert status == 206, status
        direct.append(elapsed)
        # A URL the cache has never seen: cold.
        url = f"{origin}?cold={attempt}"
        path = "/proxy/file?url=" + urllib.parse.quote(url, safe="")
        elapsed, status = first_byte("127.0.0.1", port, path, {**headers, "Authorization": f"Bearer {token}"})
        assert status == 206, status
        proxied.append(elapsed)
    print(json.dumps({"label": "seek", "direct_ms": statistics.median(direct) * 1000,
                      "proxied_ms": statistics.median(proxied) * 1000, "status": 0}))
finally:
    server.terminate()
    server.wait(timeout=30)
PY
            relay_stop
            tail -1 "$results" >&2
            ;;
        esac
    done
done
echo "load after: $(uptime)" >&2

python3 - "$results" "$work/www" <<'PY'
import json, os, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
by = {}
for row in rows:
    if row["status"] != 0:
        sys.exit(f"{row['label']} exited with {row['status']}")
    by.setdefault(row["label"], []).append(row)
def med(label, key): return statistics.median(r[key] for r in by[label])
print(f"{'run':<22} {'wall s':>8} {'CPU s':>8} {'RSS MB':>8} {'conns':>6} {'most open':>10}")
for label in by:
    if label == "seek":
        continue
    print(f"{label:<22} {med(label,'wall_s'):>8.2f} {med(label,'cpu_s'):>8.2f} {med(label,'max_rss_mb'):>8.1f}"
          f" {max(r['connections'] for r in by[label]):>6} {max(r['most_open'] for r in by[label]):>10}")
print()
def size(folder): return sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder) if f.endswith(".ts"))
if "latency-streamkit" in by:
    ratio = med("latency-streamkit", "wall_s") / med("latency-ytdlp-N8", "wall_s")
    print(f"latency: streamkit / yt-dlp -N 8: {ratio:.3f} (target <= 0.5); most open"
          f" {max(r['most_open'] for r in by['latency-streamkit'])} (at most 16);"
          f" streamkit / its -j 8: {med('latency-streamkit', 'wall_s') / med('latency-streamkit-j8', 'wall_s'):.3f}")
if "rate-streamkit-j8" in by:
    limit = size(os.path.join(sys.argv[2], "rate")) / (8 * 2_000_000)
    print(f"rate: limit of 8 x 2 MB/s {limit:.2f} s; streamkit / limit {med('rate-streamkit-j8','wall_s') / limit:.3f}"
          f" (target <= 1.05); yt-dlp / limit {med('rate-ytdlp-N8','wall_s') / limit:.3f}")
if "range-streamkit-j8" in by:
    print(f"range: streamkit / aria2c: {med('range-streamkit-j8','wall_s') / med('range-aria2-x8','wall_s'):.3f}"
          f" (target <= 1.0); limit of 8 x 4 MB/s {200_000_000 / 32_000_000:.2f} s")
if "seek" in by:
    extra = med("seek", "proxied_ms") - med("seek", "direct_ms")
    print(f"seek: first byte direct {med('seek','direct_ms'):.1f} ms, proxied cold {med('seek','proxied_ms'):.1f} ms:"
          f" {extra:.1f} ms more (target <= 50, one round trip)")
PY
