#!/usr/bin/env bash
# RTMP benchmark, StreamKit against the tools people use, side by side in one run:
#   publish: a 100 MB FLV to nginx-rtmp unpaced, `streamkit rtmp publish` against
#            `ffmpeg -i IN.flv -c copy -f flv URL` (target: at least 1.0x ffmpeg's throughput);
#   realtime publish: a 3 Mb/s file paced by its timestamps, `streamkit rtmp publish --realtime`
#            and `ffmpeg -re` at the same time (target: CPU time at most 1.0x ffmpeg's);
#   record:  one live stream recorded by `streamkit rtmp record` and `rtmpdump --live` at the same
#            time (target: CPU time per MB at most 0.9x rtmpdump's).
# Usage: [STREAMKIT_BIN=path] bench/rtmp.sh [RUNS]   (default 3 publish runs per tool, 2 realtime pairs; the
#        recording runs once, over RECORD_LOOPS passes of the 20 s input: default 1)
# Everything stays on 127.0.0.1; inputs and outputs live in bench/work/rtmp/.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${1:-3}
realtime_runs=${REALTIME_RUNS:-2}
record_loops=${RECORD_LOOPS:-1}
work=bench/work/rtmp
mkdir -p "$work"
work=$(cd "$work" && pwd)

# STREAMKIT_BIN=path measures a binary built before (to compare two versions in the same conditions).
if [ -n "${STREAMKIT_BIN:-}" ]; then
    streamkit=$STREAMKIT_BIN
else
    source bench/build-streamkit.sh  # sets $bin (STREAMKIT_LINK=dynamic for the shared Swift runtime)
    streamkit=$bin/streamkit
fi

# A 100 MB input: 20 s of 1280x720 test pattern at a constant 40 Mb/s (x264 CBR with filler
# data, as a broadcast encoder sends), GOP of 2 s, AAC audio.
input=$work/input.flv
if [ ! -s "$input" ]; then
    echo "# generating $input" >&2
    ffmpeg -nostdin -loglevel error -y \
        -f lavfi -i testsrc2=size=1280x720:rate=25 -f lavfi -i sine=frequency=440:sample_rate=44100 -t 20 \
        -map 0:v -map 1:a -pix_fmt yuv420p -c:v libx264 -preset ultrafast \
        -b:v 40M -minrate 40M -maxrate 40M -bufsize 4M -x264-params nal-hrd=cbr:force-cfr=1 \
        -g 50 -keyint_min 50 -sc_threshold 0 -c:a aac -b:a 128k \
        -f flv "$input"
fi
# The realtime pair paces a stream of ordinary bitrate (3 Mb/s, the same pattern and GOP), where
# what each tag costs, not each byte, decides the CPU time.
light=$work/input-3mbps.flv
if [ ! -s "$light" ]; then
    echo "# generating $light" >&2
    ffmpeg -nostdin -loglevel error -y \
        -f lavfi -i testsrc2=size=1280x720:rate=25 -f lavfi -i sine=frequency=440:sample_rate=44100 -t 20 \
        -map 0:v -map 1:a -pix_fmt yuv420p -c:v libx264 -preset ultrafast \
        -b:v 3M -maxrate 3M -bufsize 3M -g 50 -keyint_min 50 -sc_threshold 0 -c:a aac -b:a 128k \
        -f flv "$light"
fi
input_mb=$(python3 -c "import os,sys; print(os.path.getsize(sys.argv[1]) / 1048576)" "$input")

# nginx-rtmp on an ephemeral port, foreground, stopped by pid on exit.
port=$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
mkdir -p "$work/nginx/temp"
cat > "$work/nginx/nginx.conf" <<EOF
load_module /usr/lib/nginx/modules/ngx_rtmp_module.so;
$( [ "$(id -u)" -eq 0 ] && echo "user root;" )
daemon off;
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log info;
events { worker_connections 1024; }
rtmp { server { listen 127.0.0.1:$port; chunk_size 4096; application live { live on; record off; } } }
EOF
nginx=$(command -v nginx || echo /usr/sbin/nginx)
"$nginx" -p "$work/nginx" -c "$work/nginx/nginx.conf" -e "$work/nginx/error.log" &
nginx_pid=$!
trap 'kill "$nginx_pid" 2>/dev/null || true; wait "$nginx_pid" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
    python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), 0.1)" "$port" 2>/dev/null && break
    sleep 0.05
done
url=rtmp://127.0.0.1:$port/live

results=$work/results.jsonl
: > "$results"
# Each command's own output is discarded (exec keeps the measured process the command itself).
measure() {
    local label=$1
    shift
    bench/measure.py --label "$label" -- bash -c 'exec "$@" > /dev/null 2>&1' _ "$@" | tee -a "$results" >&2
}

echo "# publish: ${input_mb%.*} MB, $runs runs each, alternating" >&2
for run in $(seq "$runs"); do
    measure streamkit-publish "$streamkit" rtmp publish "$input" "$url/sk$run"
    measure ffmpeg-publish ffmpeg -nostdin -loglevel error -i "$input" -c copy -f flv "$url/ff$run"
done

echo "# realtime publish: $realtime_runs pairs, streamkit --realtime and ffmpeg -re side by side" >&2
for run in $(seq "$realtime_runs"); do
    measure streamkit-realtime "$streamkit" rtmp publish --realtime "$light" "$url/rtsk$run" &
    paced=$!
    measure ffmpeg-realtime ffmpeg -nostdin -loglevel error -re -i "$light" -c copy -f flv "$url/rtff$run"
    wait "$paced"
done

echo "# record: one live stream (ffmpeg -re, $record_loops passes), streamkit and rtmpdump side by side" >&2
rm -f "$work/streamkit.flv" "$work/rtmpdump.flv"
measure streamkit-record "$streamkit" rtmp record "$url/rec" -o "$work/streamkit.flv" --idle-timeout 5 &
recorder=$!
measure rtmpdump-record rtmpdump -q --live --timeout 5 -r "$url/rec" -o "$work/rtmpdump.flv" &
dumper=$!
for _ in $(seq 100); do
    [ "$(grep -c "play: name='rec'" "$work/nginx/error.log" || true)" -ge 2 ] && break
    sleep 0.05
done
ffmpeg -nostdin -loglevel error -re -stream_loop $((record_loops - 1)) -i "$input" -c copy -f flv "$url/rec"
wait "$recorder" "$dumper" || true

python3 - "$results" "$input_mb" "$work/streamkit.flv" "$work/rtmpdump.flv" <<'EOF'
import json, os, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
input_mb = float(sys.argv[2])
def of(label): return [r for r in rows if r["label"] == label]
print(f"| measurement | runs | wall s (median) | CPU s (median) | peak RSS MB | MB/s or CPU s/MB |")
print(f"| --- | --- | --- | --- | --- | --- |")
for label in ("streamkit-publish", "ffmpeg-publish", "streamkit-realtime", "ffmpeg-realtime"):
    r = of(label)
    if not r:
        continue
    wall = statistics.median(x["wall_s"] for x in r)
    print(f"| {label} | {len(r)} | {wall:.2f} | {statistics.median(x['cpu_s'] for x in r):.2f} | "
          f"{max(x['max_rss_mb'] for x in r):.1f} | {input_mb / wall:.0f} MB/s |")
sizes = {"streamkit-record": os.path.getsize(sys.argv[3]) / 1048576, "rtmpdump-record": os.path.getsize(sys.argv[4]) / 1048576}
for label, size in sizes.items():
    r = of(label)[0]
    print(f"| {label} ({size:.1f} MB) | 1 | {r['wall_s']:.2f} | {r['cpu_s']:.2f} | {r['max_rss_mb']:.1f} | "
          f"{r['cpu_s'] / size * 1000:.2f} ms/MB |")
sk = statistics.median(x["wall_s"] for x in of("streamkit-publish"))
ff = statistics.median(x["wall_s"] for x in of("ffmpeg-publish"))
per_mb = {label: of(label)[0]["cpu_s"] / size for label, size in sizes.items()}
print()
print(f"publish throughput, streamkit / ffmpeg: {ff / sk:.2f}x (target >= 1.0)")
realtime = [s["cpu_s"] / f["cpu_s"] for s, f in zip(of("streamkit-realtime"), of("ffmpeg-realtime"))]
if realtime:
    print(f"realtime publish CPU, streamkit / ffmpeg -re: {statistics.median(realtime):.2f} "
          f"(pairs: {', '.join(f'{r:.2f}' for r in realtime)}; target <= 1.0)")
print(f"record CPU per MB, streamkit / rtmpdump: {per_mb['streamkit-record'] / per_mb['rtmpdump-record']:.2f} (target <= 0.9)")
print(f"all runs exited 0: {all(r['status'] == 0 or r['label'] == 'rtmpdump-record' for r in rows)}"
      f" (rtmpdump exits 2 for a live stream that ends)")
EOF
