#!/usr/bin/env bash
# Offline HLS benchmark: `streamkit download` against yt-dlp and ffmpeg, side by side in one run.
#
#   bench/hls-download.sh                 # throttled once, unthrottled 3 rounds
#   ROUNDS=5 SKIP_SLOW=1 bench/hls-download.sh
#   FAST_ONLY=1 ROUNDS=5 bench/hls-download.sh   # only (b), the unthrottled comparison
#   STREAMKIT_LINK=dynamic bench/hls-download.sh   # the toolchain's shared Swift libraries
#
# Input: 120 real H.264/AAC TS segments of about 2 MB (12 encoded by ffmpeg, each served under 10
# names), one media playlist, nginx on 127.0.0.1.
# (a) Throttled: nginx `limit_rate 512k` per connection. `streamkit download -j 8`,
#     `yt-dlp --concurrent-fragments 8`, yt-dlp with its defaults, and `ffmpeg -i URL -c copy`.
#     The physical limit is the bytes over 8 connections at 512 KiB/s. Targets: streamkit at most
#     1.03 times the limit and at most 0.15 times yt-dlp's default time. SKIP_SLOW=1 leaves out
#     the two one-connection peers (about 8 minutes each).
# (b) Unthrottled, the same files: wall at most 0.25 times yt-dlp -N 8's, CPU at most 0.1 times
#     its; streamkit's peak RSS under 50 MB.
# Every segment streamkit stored is compared with the origin's (cmp). yt-dlp runs with
# `--fixup never` so that no ffmpeg remux is counted against it.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-3}
segments=120
distinct=12
work=$(mktemp -d "${TMPDIR:-/tmp}/streamkit-bench-hls.XXXXXX")
mkdir -p "$work/www" "$work/fast" "$work/temp" "$work/out"
chmod 755 "$work"  # nginx workers run as nobody
nginx_pids=()
cleanup() {
    for pid in "${nginx_pids[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT

ytdlp=$(command -v yt-dlp || echo "$HOME/.local/bin/yt-dlp")
[ -x "$ytdlp" ] || { echo "yt-dlp is missing: pip install --user yt-dlp" >&2; exit 1; }

source bench/build-streamkit.sh  # sets $bin (STREAMKIT_LINK=dynamic for the shared Swift runtime)

echo "encoding $distinct segments of about 2 MB ..." >&2
ffmpeg -v error -f lavfi -i "testsrc2=size=1280x720:rate=25" -f lavfi -i "sine=frequency=440:sample_rate=48000" \
    -t $((distinct * 4)) -c:v libx264 -preset ultrafast -b:v 3900k -maxrate 3900k -bufsize 2M -g 100 \
    -c:a aac -b:a 96k -f hls -hls_time 4 -hls_list_size 0 -hls_segment_filename "$work/temp/s%02d.ts" \
    "$work/temp/encoded.m3u8"
{
    echo "#EXTM3U"; echo "#EXT-X-VERSION:3"; echo "#EXT-X-TARGETDURATION:4"; echo "#EXT-X-MEDIA-SEQUENCE:0"
    echo "#EXT-X-PLAYLIST-TYPE:VOD"
    for i in $(seq 0 $((segments - 1))); do
        source=$(printf 's%02d.ts' $((i % distinct)))
        cp "$work/temp/$source" "$work/www/seg$i.ts"
        echo "#EXTINF:4.000,"; echo "seg$i.ts"
    done
    echo "#EXT-X-ENDLIST"
} > "$work/www/index.m3u8"
total_bytes=$(cat "$work"/www/seg*.ts | wc -c)
echo "$segments segments, $total_bytes bytes" >&2

start_nginx() {  # name, limit ("0" for none); sets $url
    local name=$1 limit=$2 port
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    mkdir -p "$work/$name"
    cat > "$work/$name/nginx.conf" <<CONF
daemon off;
worker_processes 1;
pid $work/$name/nginx.pid;
error_log $work/$name/error.log;
events { worker_connections 1024; }
http {
    types { application/vnd.apple.mpegurl m3u8; video/mp2t ts; }
    access_log off;
    sendfile on; tcp_nopush on; keepalive_timeout 65; keepalive_requests 100000;
    client_body_temp_path $work/temp; proxy_temp_path $work/temp; fastcgi_temp_path $work/temp;
    uwsgi_temp_path $work/temp; scgi_temp_path $work/temp;
    server { listen 127.0.0.1:$port; location / { root $work/www; limit_rate $limit; } }
}
CONF
    nginx -p "$work/$name" -c "$work/$name/nginx.conf" -e "$work/$name/error.log" > /dev/null 2>&1 &
    nginx_pids+=($!)
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/index.m3u8" && break; sleep 0.05; done
    url="http://127.0.0.1:$port/index.m3u8"
}
start_nginx throttled 512k; throttled=$url
start_nginx fast 0; fast=$url

results="$work/results.jsonl"
measure() { bench/measure.py --label "$1" -- "${@:2}" | tee -a "$results" >&2; }
verify_package() {  # every stored segment against the origin's, in playlist order
    local package=$1 stored
    stored=$(grep -v '^#' "$package"/*/index.m3u8 | grep -c .)
    [ "$stored" -eq "$segments" ] || { echo "package holds $stored segments, not $segments" >&2; exit 1; }
    local i=0 media
    media=$(ls -d "$package"/*/ | head -1)
    while read -r uri; do
        cmp -s "$media/$uri" "$work/www/seg$i.ts" || { echo "segment $i differs" >&2; exit 1; }
        i=$((i + 1))
    done < <(grep -v '^#' "$media/index.m3u8")
    rm -rf "$package"
}
streamkit() { measure "$1" "$bin/streamkit" download "$2" -j 8 -o "$work/out/package" --home "$work/home"; }
ytdlp_run() { measure "$1" "$ytdlp" -q --no-progress --fixup never --no-part -o "$work/out/yt.ts" "${@:3}" "$2"; rm -f "$work/out/yt.ts"; }

echo "load before: $(uptime)" >&2
if [ -z "${FAST_ONLY:-}" ]; then
    echo "(a) throttled ..." >&2
    streamkit throttled-streamkit-j8 "$throttled"; verify_package "$work/out/package"
    ytdlp_run throttled-ytdlp-N8 "$throttled" --concurrent-fragments 8
    if [ -z "${SKIP_SLOW:-}" ]; then
        ytdlp_run throttled-ytdlp-default "$throttled"
        measure throttled-ffmpeg-copy ffmpeg -v error -i "$throttled" -c copy -y "$work/out/ff.ts"
        rm -f "$work/out/ff.ts"
    fi
fi
echo "(b) unthrottled ..." >&2
for _ in $(seq "$rounds"); do
    streamkit fast-streamkit-j8 "$fast"; verify_package "$work/out/package"
    ytdlp_run fast-ytdlp-N8 "$fast" --concurrent-fragments 8
done
echo "load after: $(uptime)" >&2

python3 - "$results" "$total_bytes" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
total = int(sys.argv[2])
by = {}
for row in rows:
    if row["status"] != 0:
        sys.exit(f"{row['label']} exited with {row['status']}")
    by.setdefault(row["label"], []).append(row)
def med(label, key): return statistics.median(r[key] for r in by[label])
print(f"{'run':<26} {'wall s':>8} {'CPU s':>8} {'RSS MB':>8}")
for label in by:
    print(f"{label:<26} {med(label,'wall_s'):>8.2f} {med(label,'cpu_s'):>8.2f} {med(label,'max_rss_mb'):>8.1f}")
limit = total / (8 * 512 * 1024)
# nginx lets each response run a second ahead of its rate (limit_rate counts from one second
# before the request), so 8 connections taking 120 segments in turn can finish 15 s sooner.
burst_limit = limit - (segments_count := 120) / 8
print()
print(f"{total / 1e6:.0f} MB; physical limit at 8 x 512 KiB/s: {limit:.1f} s ({burst_limit:.1f} s with nginx's one-second burst a response)")
if "throttled-streamkit-j8" in by:
    ours = med("throttled-streamkit-j8", "wall_s")
    print(f"(a) streamkit / limit:             {ours / limit:.3f}  (target <= 1.03; {ours / burst_limit:.3f} of the burst limit)")
    print(f"    yt-dlp -N 8 / limit:           {med('throttled-ytdlp-N8','wall_s') / limit:.3f}")
    print(f"    streamkit / yt-dlp -N 8:       {ours / med('throttled-ytdlp-N8','wall_s'):.3f}")
if "throttled-ytdlp-default" in by:
    print(f"    streamkit / yt-dlp default:    {ours / med('throttled-ytdlp-default','wall_s'):.3f}  (target <= 0.15)")
    print(f"    streamkit / ffmpeg -c copy:    {ours / med('throttled-ffmpeg-copy','wall_s'):.3f}")
gb = total / 1e9
print(f"(b) wall streamkit / yt-dlp -N 8:  {med('fast-streamkit-j8','wall_s') / med('fast-ytdlp-N8','wall_s'):.3f}  (target <= 0.25)")
print(f"    CPU streamkit / yt-dlp -N 8:   {med('fast-streamkit-j8','cpu_s') / med('fast-ytdlp-N8','cpu_s'):.3f}  (target <= 0.10)")
print(f"    CPU s per GB: streamkit {med('fast-streamkit-j8','cpu_s') / gb:.2f}, yt-dlp {med('fast-ytdlp-N8','cpu_s') / gb:.2f}")
print(f"    streamkit peak RSS:            {max(r['max_rss_mb'] for label in by if 'streamkit' in label for r in by[label]):.1f} MB  (target < 50)")
PY
