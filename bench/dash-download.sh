#!/usr/bin/env bash
# Offline DASH benchmark: `streamkit download URL.mpd` against `yt-dlp -N 8`, side by side in one
# run, on the same files and the same nginx, as bench/hls-download.sh does for HLS.
#
#   bench/dash-download.sh              # ROUNDS=3 by default
#   STREAMKIT_LINK=dynamic bench/dash-download.sh
#
# Input: a static MPD with one 1280x720 H.264 Representation of 120 fragmented-MP4 segments of
# 4 s (about 2 MB; 12 encoded by ffmpeg's DASH muxer, each served under 10 numbers) and its
# initialization segment, SegmentTemplate with $Number$ and a duration; nginx on 127.0.0.1,
# unthrottled. Targets (as HLS): wall at most 0.25 times yt-dlp -N 8's, CPU at most 0.1 times
# its, streamkit's peak RSS under 50 MB. Every segment streamkit stored is compared with the
# origin's (cmp); yt-dlp runs with `--fixup never` so that no remux is counted against it.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-3}
segments=120
distinct=12
work=$(mktemp -d "${TMPDIR:-/tmp}/streamkit-bench-dash.XXXXXX")
mkdir -p "$work/www" "$work/temp" "$work/out"
chmod 755 "$work"  # nginx workers run as nobody
nginx_pid=
cleanup() {
    [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null && wait "$nginx_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

ytdlp=$(command -v yt-dlp || echo "$HOME/.local/bin/yt-dlp")
[ -x "$ytdlp" ] || { echo "yt-dlp is missing: pip install --user yt-dlp" >&2; exit 1; }

source bench/build-streamkit.sh  # sets $bin

echo "encoding $distinct segments of about 2 MB ..." >&2
ffmpeg -v error -f lavfi -i "testsrc2=size=1280x720:rate=25" -t $((distinct * 4)) -c:v libx264 -preset ultrafast \
    -b:v 3900k -maxrate 3900k -bufsize 2M -g 100 -keyint_min 100 -sc_threshold 0 -f dash -seg_duration 4 \
    -use_template 1 -use_timeline 0 "$work/temp/encoded.mpd"
cp "$work/temp/init-stream0.m4s" "$work/www/init.m4s"
for i in $(seq 1 $segments); do
    cp "$work/temp/$(printf 'chunk-stream0-%05d.m4s' $(((i - 1) % distinct + 1)))" "$work/www/seg-$i.m4s"
done
cat > "$work/www/manifest.mpd" <<MPD
<?xml version="1.0" encoding="utf-8"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" profiles="urn:mpeg:dash:profile:isoff-live:2011"
  mediaPresentationDuration="PT$((segments * 4))S" minBufferTime="PT4S">
  <Period id="0">
    <AdaptationSet id="0" contentType="video" mimeType="video/mp4" segmentAlignment="true">
      <SegmentTemplate timescale="1000" duration="4000" startNumber="1" initialization="init.m4s"
        media="seg-\$Number\$.m4s"/>
      <Representation id="v" bandwidth="3900000" codecs="avc1.640028" width="1280" height="720"/>
    </AdaptationSet>
  </Period>
</MPD>
MPD
total_bytes=$(cat "$work"/www/*.m4s | wc -c)
echo "$segments segments, $total_bytes bytes" >&2

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$work/nginx.conf" <<CONF
daemon off;
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 1024; }
http {
    types { application/dash+xml mpd; video/mp4 m4s; }
    access_log off;
    sendfile on; tcp_nopush on; keepalive_timeout 65; keepalive_requests 100000;
    client_body_temp_path $work/temp; proxy_temp_path $work/temp; fastcgi_temp_path $work/temp;
    uwsgi_temp_path $work/temp; scgi_temp_path $work/temp;
    server { listen 127.0.0.1:$port; location / { root $work/www; } }
}
CONF
nginx -p "$work" -c "$work/nginx.conf" -e "$work/error.log" > /dev/null 2>&1 &
nginx_pid=$!
url="http://127.0.0.1:$port/manifest.mpd"
for _ in $(seq 100); do curl -s -o /dev/null "$url" && break; sleep 0.05; done

results="$work/results.jsonl"
measure() { bench/measure.py --label "$1" -- "${@:2}" | tee -a "$results" >&2; }
verify_package() {  # every stored segment against the origin's, by number
    local package=$1 i
    for i in $(seq 1 $segments); do
        cmp -s "$package/video/$(printf '%05d.m4s' "$i")" "$work/www/seg-$i.m4s" ||
            { echo "segment $i differs" >&2; exit 1; }
    done
    grep -q 'type="static"' "$package/manifest.mpd" || { echo "no manifest.mpd" >&2; exit 1; }
    rm -rf "$package"
}

echo "load before: $(uptime)" >&2
for _ in $(seq "$rounds"); do
    measure streamkit-j8 "$bin/streamkit" download "$url" -j 8 -o "$work/out/package" --home "$work/home"
    verify_package "$work/out/package"
    measure ytdlp-N8 "$ytdlp" -q --no-progress --fixup never --no-part --concurrent-fragments 8 \
        -o "$work/out/yt.mp4" "$url"
    rm -f "$work/out/yt.mp4"
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
print(f"{'run':<16} {'wall s':>8} {'CPU s':>8} {'RSS MB':>8}")
for label in by:
    print(f"{label:<16} {med(label,'wall_s'):>8.2f} {med(label,'cpu_s'):>8.2f} {med(label,'max_rss_mb'):>8.1f}")
print(f"{total / 1e6:.0f} MB in 120 segments")
print(f"wall streamkit / yt-dlp -N 8:  {med('streamkit-j8','wall_s') / med('ytdlp-N8','wall_s'):.3f}  (target <= 0.25)")
print(f"CPU streamkit / yt-dlp -N 8:   {med('streamkit-j8','cpu_s') / med('ytdlp-N8','cpu_s'):.3f}  (target <= 0.10)")
print(f"streamkit peak RSS:            {max(r['max_rss_mb'] for r in by['streamkit-j8']):.1f} MB  (target < 50)")
PY
