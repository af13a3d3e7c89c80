#!/usr/bin/env bash
# Watching while it downloads: how soon a throttled HLS download can be played, and what it
# costs. `streamkit download` (with `streamkit serve` of its home) against yt-dlp writing one
# MPEG-TS file in order (`--hls-use-mpegts --no-part`, which a player can read as it grows).
#
#   bench/play-while.sh                         # builds streamkit (release, static runtime)
#   STREAMKIT_BIN=.build/release bench/play-while.sh
#
# Input: 300 one-second H.264/AAC TS segments of about 80 kB (10 encoded, each served under 30
# names), nginx on 127.0.0.1 with `limit_rate 64k` per connection; both tools with 8 connections.
# Reported: seconds until the first segment can be played (streamkit: its package's
# index.m3u8 answers through serve and lists a segment; yt-dlp: its output file holds the first
# segment's bytes), the whole download, and the download's CPU (growing playlists included).
# Targets: the first segment playable within 3 s, and at most 1.2 times yt-dlp's time to its
# first bytes.
set -euo pipefail
cd "$(dirname "$0")/.."

segments=300
distinct=10
work=$(mktemp -d "${TMPDIR:-/tmp}/streamkit-bench-play.XXXXXX")
mkdir -p "$work/www" "$work/temp" "$work/out"
chmod 755 "$work"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT

ytdlp=$(command -v yt-dlp || echo "$HOME/.local/bin/yt-dlp")
[ -x "$ytdlp" ] || { echo "yt-dlp is missing: pip install --user yt-dlp" >&2; exit 1; }
if [ -n "${STREAMKIT_BIN:-}" ]; then bin=$(cd "$STREAMKIT_BIN" && pwd); else source bench/build-streamkit.sh; fi

ffmpeg -v error -f lavfi -i "testsrc2=size=640x360:rate=25" -f lavfi -i "sine=frequency=440:sample_rate=48000" \
    -t "$distinct" -c:v libx264 -preset ultrafast -b:v 600k -maxrate 600k -bufsize 600k -g 25 \
    -c:a aac -b:a 64k -f hls -hls_time 1 -hls_list_size 0 -hls_segment_filename "$work/temp/s%02d.ts" \
    "$work/temp/encoded.m3u8"
{
    echo "#EXTM3U"; echo "#EXT-X-VERSION:3"; echo "#EXT-X-TARGETDURATION:1"; echo "#EXT-X-MEDIA-SEQUENCE:0"
    echo "#EXT-X-PLAYLIST-TYPE:VOD"
    for i in $(seq 0 $((segments - 1))); do
        cp "$work/temp/$(printf 's%02d.ts' $((i % distinct)))" "$work/www/seg$i.ts"
        echo "#EXTINF:1.000,"; echo "seg$i.ts"
    done
    echo "#EXT-X-ENDLIST"
} > "$work/www/index.m3u8"
first_bytes=$(stat -c %s "$work/www/seg0.ts")
echo "$segments segments, $(cat "$work"/www/seg*.ts | wc -c) bytes" >&2

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$work/nginx"
cat > "$work/nginx/nginx.conf" <<CONF
daemon off;
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 1024; }
http {
    types { application/vnd.apple.mpegurl m3u8; video/mp2t ts; }
    access_log off;
    sendfile on; keepalive_timeout 65; keepalive_requests 100000;
    client_body_temp_path $work/temp; proxy_temp_path $work/temp; fastcgi_temp_path $work/temp;
    uwsgi_temp_path $work/temp; scgi_temp_path $work/temp;
    server { listen 127.0.0.1:$port; location / { root $work/www; limit_rate 64k; } }
}
CONF
nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" -e "$work/nginx/error.log" > /dev/null 2>&1 &
pids+=($!)
url="http://127.0.0.1:$port/index.m3u8"
for _ in $(seq 100); do curl -s -o /dev/null "$url" && break; sleep 0.05; done

now() { python3 -c 'import time; print(time.monotonic())'; }

# streamkit: download into a home that serve serves.
home="$work/home"
mkdir -p "$home"
"$bin/streamkit" serve --home "$home" --port 0 > "$work/serve.out" 2>&1 &
pids+=($!)
for _ in $(seq 200); do grep -q '^URL: ' "$work/serve.out" && break; sleep 0.05; done
serve_url=$(sed -n 's/^URL: //p' "$work/serve.out" | head -1)
start=$(now)
/usr/bin/time -f '%e %U %S' -o "$work/streamkit.time" "$bin/streamkit" download "$url" -j 8 --home "$home" \
    > /dev/null 2>&1 &
download=$!
first=""
while kill -0 "$download" 2>/dev/null; do
    for index in "$home"/library/*/index.m3u8; do
        [ -e "$index" ] || continue
        id=$(basename "$(dirname "$index")")
        if curl -sf "${serve_url}library/$id/video/index.m3u8" | grep -q '^#EXTINF'; then
            first=$(python3 -c "print(f'{$(now) - $start:.2f}')")
            listed=$(curl -sf "${serve_url}library/$id/video/index.m3u8" | grep -c '^#EXTINF')
        fi
    done
    [ -n "$first" ] && break
    sleep 0.05
done
wait "$download"
read -r sk_wall sk_user sk_sys < "$work/streamkit.time"

# yt-dlp: one MPEG-TS file written in playlist order.
start=$(now)
/usr/bin/time -f '%e %U %S' -o "$work/ytdlp.time" "$ytdlp" -q --no-progress --hls-use-mpegts --no-part \
    --concurrent-fragments 8 --fixup never -o "$work/out/yt.ts" "$url" > /dev/null 2>&1 &
ytdlp_pid=$!
yt_first=""
while kill -0 "$ytdlp_pid" 2>/dev/null; do
    size=$(stat -c %s "$work/out/yt.ts" 2>/dev/null || echo 0)
    if [ "$size" -ge "$first_bytes" ]; then yt_first=$(python3 -c "print(f'{$(now) - $start:.2f}')"); break; fi
    sleep 0.05
done
wait "$ytdlp_pid"
read -r yt_wall yt_user yt_sys < "$work/ytdlp.time"

python3 - "$first" "$listed" "$sk_wall" "$sk_user" "$sk_sys" "$yt_first" "$yt_wall" "$yt_user" "$yt_sys" <<'PY'
import sys
first, listed, sk_wall, sk_user, sk_sys, yt_first, yt_wall, yt_user, yt_sys = sys.argv[1:]
sk_cpu = float(sk_user) + float(sk_sys)
yt_cpu = float(yt_user) + float(yt_sys)
print(f"{'':<10} {'first playable s':>17} {'download s':>11} {'CPU s':>7}")
print(f"{'streamkit':<10} {float(first):>17.2f} {float(sk_wall):>11.2f} {sk_cpu:>7.2f}   ({listed} segments in the first playlist)")
print(f"{'yt-dlp':<10} {float(yt_first or 'nan'):>17.2f} {float(yt_wall):>11.2f} {yt_cpu:>7.2f}")
print(f"first playable: streamkit {float(first):.2f} s (target <= 3), "
      f"streamkit / yt-dlp first bytes {float(first) / float(yt_first):.2f} (target <= 1.2)")
print(f"download wall streamkit / yt-dlp {float(sk_wall) / float(yt_wall):.2f}, CPU {sk_cpu / yt_cpu:.2f}")
PY
