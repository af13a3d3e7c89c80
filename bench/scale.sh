#!/usr/bin/env bash
# Cost curves (issue 26): how StreamKit's time, CPU and peak RSS grow with the size of its work.
# Each section measures one curve at the issue's sizes and prints a table, one row per size, with
# the growth from the row before (time and RSS ratios) so that a path growing faster than the work
# shows at a glance.
#
#   bench/scale.sh [SECTION...]      # every section by default
#   STREAMKIT_BIN=path bench/scale.sh ...   # measure that binary instead of building one
#
# Sections:
#   playlists  `streamkit inspect` and `inspect --json` of media playlists of 10^4, 10^5 and 10^6
#              segments (bench/generate-hls-playlist.py: keys, byte ranges, date-times).
#              Targets: time and RSS linear; RSS at 10^6 under 400 MB.
#   downloads  `streamkit download -j 8` of media playlists of tiny segments (752 bytes, one file
#              that nginx serves under every segment name) into a home on /dev/shm, so that the
#              disk and the network do not hide the download's own costs. DOWNLOAD_SIZES sets the
#              sizes ("10000 100000" by default; 1000000 takes about ten minutes).
#              Targets: time and RSS linear; RSS at 10^6 under 400 MB.
#   library    `streamkit serve` of a library of 100 and 1,000 packages (copies of one downloaded
#              300-segment package): the time to its ready line, the first page (while serve's
#              own first read of the items runs), the page warm (median of 10) and serve's peak
#              RSS, at a first start and at a restart (which finds the items in library-items.json).
#              Targets: start-up and the page under 200 ms, memory flat in the packages.
#   queue      a queue of 10, 1,000 and 10,000 file tasks made through the library's API
#              (bench-queue fill: `add` of each, run 8 at a time to success against nginx, a fifth
#              and at most 200 added stopped; the mean add over the first and last 1,000), the
#              manager opened by a process of its own (bench-queue open: the recovery reads every
#              task), then, while `queue run` holds 8 tasks running against a 64 KB/s origin,
#              `queue add` of one more, `queue list`, `queue list --json` (three runs each, and
#              three opens: the table shows the quickest), and serve's page and `/api/tasks`.
#              Targets: each at 10,000 within 4x its time at 1,000 and under
#              300 ms; the manager's RSS under 60 MB at 10,000.
#   cache      a media cache of 10,000 and 100,000 entries (2,000-byte files on /dev/shm with ten
#              claimed spans each, 1,000,000 spans at 100,000; rows written with Python's sqlite3):
#              `cache list` (the 100 most recent and the totals) and `cache list --all`, `cache rm`
#              of a URL it does not hold (opens the store), cache hits through serve's proxy
#              (bench/cache-hits.py: 300 entries read for the first time, then again), and opening
#              with a lower cap: 1,000 entries evicted, then 10% of the cap. Target: each within 4x
#              of its time at 10,000 (the eviction of 10% is ten times the victims at 100,000).
#   proxy      the first proxied request of a fresh `streamkit serve` (time to first byte of a cold
#              /proxy/file miss from nginx) against the next 20, over five processes
#              (bench/serve-proxy.py). Target: the first within 2 ms of the later ones.
#   live       a live HLS recording of LIVE_SEGMENTS (43,200 by default: a day of two-second
#              segments) from a simulated origin that adds one segment at every reload, the
#              recorder's reload wait injected so that the day passes in minutes (bench-live, a
#              library-level bench into /dev/shm): wall and CPU seconds of each 1,000 segments, RSS.
#              Targets: the last 1,000 cost at most 2x the first 1,000; RSS flat over the run.
#   network    bench/network.sh: through a relay adding 25 ms each way and pacing each connection,
#              latency-bound HLS (defaults against yt-dlp -N 8), rate-bound HLS (-j 8 against the
#              limit and yt-dlp), a 200 MB file over 8 ranges against aria2c, a cold proxied seek
#              against the same range fetched directly. Targets there.
# The raw JSON lines are kept in bench/work/scale/results.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(pwd)/bench/work/scale
mkdir -p "$work"
results="$work/results.jsonl"
: >"$results"
sections=("$@")
[ ${#sections[@]} -gt 0 ] || sections=(playlists downloads library queue cache proxy live network)
home=/dev/shm/streamkit-scale-$$
nginx_pids=()
cleanup() {
    for pid in "${nginx_pids[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
    rm -rf "$home"
}
trap cleanup EXIT

echo "== machine: $(nproc) cores, $(uptime | sed 's/.*load average/load average/')"
if [ -n "${STREAMKIT_BIN:-}" ]; then
    streamkit=$STREAMKIT_BIN
else
    . bench/build-streamkit.sh
    streamkit="$bin/streamkit"
fi

# measure LABEL SIZE COMMAND...: one measured run, appended to the results with its section and size.
measure() {
    local label=$1 size=$2
    shift 2
    bench/measure.py --label "$label" -- "$@" | grep '^{"label"' |
        sed "s/^{/{\"section\":\"$section\",\"size\":$size,/" | tee -a "$results"
}

# table SECTION: the section's rows as a table, each label's rows in size order with growth ratios;
# a label measured more than once at a size shows its quickest run, with the number of runs.
table() {
    python3 - "$results" "$1" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
rows = [row for row in rows if row["section"] == sys.argv[2] and "wall_s" in row]
runs = {}
for row in rows:
    runs.setdefault((row["label"], row["size"]), []).append(row)
best = {key: dict(min(group, key=lambda r: r["wall_s"]), runs=len(group)) for key, group in runs.items()}
print("| what | size | runs | wall s (best) | CPU s | peak RSS MB | wall x prev | RSS x prev | size x prev |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for label in dict.fromkeys(row["label"] for row in rows):
    previous = None
    for row in sorted((r for (l, _), r in best.items() if l == label), key=lambda r: r["size"]):
        growth = ("", "", "")
        if previous:
            growth = (f"{row['wall_s'] / previous['wall_s']:.1f}", f"{row['max_rss_mb'] / previous['max_rss_mb']:.1f}",
                      f"{row['size'] / previous['size']:.0f}")
        print(f"| {label} | {row['size']:,} | {row['runs']} | {row['wall_s']:.3f} | {row['cpu_s']:.3f} | {row['max_rss_mb']:.1f} | "
              + " | ".join(growth) + " |")
        previous = row
PY
}

# start_nginx ROOT: nginx on an ephemeral port serving ROOT, answering every /seg/... with
# ROOT/tiny.ts and every /slow/... with ROOT/big.bin at 64 KB/s; sets $origin to its base URL.
start_nginx() {
    local root=$1 port
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    mkdir -p "$work/nginx/temp"
    cat >"$work/nginx/nginx.conf" <<CONF
daemon off;
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 1024; }
http {
    types { application/vnd.apple.mpegurl m3u8; video/mp2t ts; }
    access_log off;
    keepalive_timeout 65; keepalive_requests 100000000;
    client_body_temp_path $work/nginx/temp; proxy_temp_path $work/nginx/temp;
    fastcgi_temp_path $work/nginx/temp; uwsgi_temp_path $work/nginx/temp; scgi_temp_path $work/nginx/temp;
    server {
        listen 127.0.0.1:$port; root $root;
        location /seg/ { rewrite ^ /tiny.ts break; }
        location /slow/ { limit_rate 64k; rewrite ^ /big.bin break; }
    }
}
CONF
    nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" -e "$work/nginx/error.log" >/dev/null 2>&1 &
    nginx_pids+=($!)
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/tiny.ts" && break; sleep 0.05; done
    origin="http://127.0.0.1:$port"
}

for section in "${sections[@]}"; do
    case $section in
    playlists)
        echo "== playlists: inspect"
        for segments in 10000 100000 1000000; do
            file="$work/media-$segments.m3u8"
            [ -s "$file" ] || python3 bench/generate-hls-playlist.py --segments "$segments" --output "$file"
            measure inspect "$segments" "$streamkit" inspect "$file"
            measure inspect-json "$segments" sh -c 'exec "$0" inspect --json "$1" >/dev/null' "$streamkit" "$file"
        done
        table playlists
        ;;
    downloads)
        echo "== downloads: tiny segments"
        www="$work/www"
        mkdir -p "$www"
        chmod 755 "$work" "$www" # nginx workers run as nobody
        # Four MPEG-TS null packets.
        python3 -c 'import sys; open(sys.argv[1], "wb").write((bytes([0x47, 0x1F, 0xFF, 0x10]) + b"\xff" * 184) * 4)' \
            "$www/tiny.ts"
        start_nginx "$www"
        for segments in ${DOWNLOAD_SIZES:-10000 100000}; do
            playlist="$www/tiny-$segments.m3u8"
            [ -s "$playlist" ] || python3 -c '
import sys
count, path = int(sys.argv[1]), sys.argv[2]
with open(path, "w") as out:
    out.write("#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-PLAYLIST-TYPE:VOD\n")
    for index in range(count):
        out.write(f"#EXTINF:2.000,\nseg/{index}.ts\n")
    out.write("#EXT-X-ENDLIST\n")
' "$segments" "$playlist"
            rm -rf "$home"
            # Past the default bound of 100,000 segments a playlist, raise it to the size.
            limit=()
            [ "$segments" -le 100000 ] || limit=(--max-segments "$segments")
            measure download "$segments" "$streamkit" download "$origin/tiny-$segments.m3u8" \
                --home "$home" -j 8 --json "${limit[@]}"
        done
        table downloads
        ;;
    library)
        echo "== library: serve"
        www="$work/www"
        mkdir -p "$www"
        chmod 755 "$work" "$www"
        python3 -c 'import sys; open(sys.argv[1], "wb").write((bytes([0x47, 0x1F, 0xFF, 0x10]) + b"\xff" * 184) * 4)' \
            "$www/tiny.ts"
        python3 -c '
import sys
with open(sys.argv[1], "w") as out:
    out.write("#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-PLAYLIST-TYPE:VOD\n")
    for index in range(300):
        out.write(f"#EXTINF:2.000,\nseg/{index}.ts\n")
    out.write("#EXT-X-ENDLIST\n")
' "$www/tiny-300.m3u8"
        [ -n "${origin:-}" ] || start_nginx "$www"
        rm -rf "$home"
        "$streamkit" download "$origin/tiny-300.m3u8" --home "$home" -j 8 >/dev/null 2>&1
        model=$(ls "$home/library")
        for packages in 100 1000; do
            # Copies of the one package under ids of their own, up to the size wanted.
            existing=$(ls "$home/library" | wc -l)
            for index in $(seq "$existing" $((packages - 1))); do
                id=$(printf '%016x' $((0x100000 + index)))
                cp -r "$home/library/$model" "$home/library/$id"
                sed -i "s/$model/$id/g" "$home/library/$id/package.json"
            done
            # A first start reads every item; a restart finds them in library-items.json.
            rm -f "$home/library-items.json"
            python3 bench/serve-library.py "$streamkit" "$home" "$packages" |
                sed 's/"label": "serve"/"label": "first start"/' | tee -a "$results"
            python3 bench/serve-library.py "$streamkit" "$home" "$packages" |
                sed 's/"label": "serve"/"label": "restart"/' | tee -a "$results"
        done
        python3 - "$results" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if '"library"' in line]
print("| packages | serve | ready s | first page s | warm page s (median of 10) | page KB | serve peak RSS MB |")
print("| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
for row in rows:
    print(f"| {row['size']:,} | {row['label']} | {row['ready_s']:.3f} | {row['first_page_s']:.3f} | {row['warm_page_s']:.3f} | "
          f"{row['page_bytes'] / 1024:.0f} | {row['max_rss_mb']:.1f} |")
PY
        ;;
    queue)
        echo "== queue: a queue made through the API, its commands and serve while 8 tasks run"
        www="$work/www"
        mkdir -p "$www"
        chmod 755 "$work" "$www"
        [ -s "$www/tiny.ts" ] || python3 -c 'import sys; open(sys.argv[1], "wb").write(bytes(752))' "$www/tiny.ts"
        truncate -s 1G "$www/big.bin" # what the 8 running tasks fetch, at 64 KB/s each
        [ -n "${origin:-}" ] || start_nginx "$www"
        if [ -n "${BENCH_QUEUE_BIN:-}" ]; then
            bench_queue=$BENCH_QUEUE_BIN
        else
            swift build -c release --static-swift-stdlib --product bench-queue --build-path .build/static >&2
            bench_queue=.build/static/release/bench-queue
        fi
        for tasks in 10 1000 10000; do
            rm -rf "$home"
            # Every task added with the manager's `add` and run to success (a fifth, at most 200,
            # added stopped), then the manager opened again by a process of its own.
            "$bench_queue" fill "$home" "$origin" "$tasks" | tee -a "$results"
            for run in 1 2 3; do measure "manager open" "$tasks" "$bench_queue" open "$home"; done
            # 8 tasks running against the throttled origin while the commands and serve are measured.
            "$streamkit" queue config --max-concurrent 8 --autostart on --home "$home" >/dev/null
            for index in 1 2 3 4 5 6 7 8; do
                "$streamkit" queue add "$origin/slow/$index.bin" --kind file --home "$home" >/dev/null
            done
            "$streamkit" queue run --home "$home" >/dev/null 2>&1 &
            runner=$!
            for _ in $(seq 200); do
                [ "$("$streamkit" queue list --home "$home" | grep -c ' running ')" = 8 ] && break
                sleep 0.05
            done
            echo "running: $("$streamkit" queue list --home "$home" | grep -c ' running ') of 8"
            # Three runs of each (the table shows the quickest): single runs on these 2 cores
            # moved by 1.5x from one run of the section to the next.
            for run in 1 2 3; do
                measure "queue add" "$tasks" "$streamkit" queue add "$origin/seg/one-more-$run.ts" --kind file \
                    --home "$home"
                measure "queue list" "$tasks" sh -c 'exec "$0" queue list --home "$1" >/dev/null' "$streamkit" "$home"
                measure "queue list --json" "$tasks" sh -c 'exec "$0" queue list --json --home "$1" >/dev/null' \
                    "$streamkit" "$home"
            done
            python3 bench/serve-library.py "$streamkit" "$home" "$tasks" queue | tee -a "$results"
            kill -INT "$runner"
            wait "$runner" || true
        done
        table queue
        python3 - "$results" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if '"section": "queue"' in line]
print("| tasks | add, first 1,000 ms | add, last 1,000 ms | run to success s | fill peak RSS MB |")
print("| ---: | ---: | ---: | ---: | ---: |")
for row in (row for row in rows if row["label"] == "fill"):
    print(f"| {row['size']:,} | {row['add_first_1000_ms']:.3f} | {row['add_last_1000_ms']:.3f} | {row['run_s']:.2f} | "
          f"{row['peak_rss_mb']:.1f} |")
print()
print("| tasks | serve page s (median of 10) | /api/tasks s (median of 10) | serve peak RSS MB |")
print("| ---: | ---: | ---: | ---: |")
for row in (row for row in rows if "warm_page_s" in row):
    print(f"| {row['size']:,} | {row['warm_page_s']:.3f} | {row['api_tasks_s']:.3f} | {row['max_rss_mb']:.1f} |")
PY
        ;;
    cache)
        echo "== cache: list, open, hits and eviction over many entries"
        for entries in 10000 100000; do
            rm -rf "$home"
            "$streamkit" cache clear --home "$home" >/dev/null
            python3 - "$home/cache" "$entries" <<'PY'
import os, sqlite3, sys
# Each entry: a 2,000-byte file of which ten spans of 100 bytes are claimed (1,000,000 spans at
# 100,000 entries), last used in the order of its number.
cache, count = sys.argv[1], int(sys.argv[2])
blob = bytes(2000)
spans = "[" + ",".join(f"[{start},{start + 100}]" for start in range(0, 2000, 200)) + "]"
rows = []
for i in range(count):
    name = "%032x.ts" % i
    with open(os.path.join(cache, "data", name), "wb") as out:
        out.write(blob)
    rows.append((f"http://127.0.0.1:9/f{i}.ts", "%032x" % i, f"http://127.0.0.1:9/f{i}.ts", name, 2000,
                 "video/mp2t", spans, 1000, 1796231444.0 + i, 1796231444.0 + i))
index = sqlite3.connect(os.path.join(cache, "index.sqlite"))
index.executemany("INSERT INTO resources(key, hash, url, file_name, content_length, mime_type, spans, cached_bytes,"
                  " last_access, created) VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
index.commit()
PY
            measure "cache list" "$entries" sh -c 'exec "$0" cache list --home "$1" >/dev/null' "$streamkit" "$home"
            measure "cache list --all" "$entries" sh -c 'exec "$0" cache list --all --home "$1" >/dev/null' \
                "$streamkit" "$home"
            measure "cache open (rm of a URL not cached)" "$entries" sh -c \
                '"$0" cache rm http://127.0.0.1:9/none.ts --home "$1" >/dev/null 2>&1; exit 0' "$streamkit" "$home"
            bench/cache-hits.py "$streamkit" "$home" "$entries" | tee -a "$results"
            # Eviction at open, by a preload of cached bytes with a lower cap: first 1,000 entries
            # at either size (the same work over a larger index), then 10% of what is left.
            newest=http://127.0.0.1:9/f$((entries - 1)).ts
            measure "open evicting 1,000 entries" "$entries" "$streamkit" cache preload "$newest" --bytes 100 \
                --cache-limit $(((entries - 1000) * 1000)) --home "$home"
            measure "open evicting 10% of the cap" "$entries" "$streamkit" cache preload "$newest" --bytes 100 \
                --cache-limit $(((entries - 1000) * 900)) --home "$home"
            "$streamkit" cache list --home "$home" | tail -1
        done
        table cache
        python3 - "$results" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
rows = [row for row in rows if row.get("label") == "cache hit through the proxy"]
print()
print("| entries | serve start s | first read of an entry: median ms | p90 ms | second read: median ms | p90 ms |")
print("| ---: | ---: | ---: | ---: | ---: | ---: |")
for row in rows:
    print(f"| {row['size']:,} | {row['serve_start_s']:.3f} | {row['first_median_ms']:.3f} | {row['first_p90_ms']:.3f} | "
          f"{row['second_median_ms']:.3f} | {row['second_p90_ms']:.3f} |")
PY
        ;;
    proxy)
        echo "== proxy: the first request of a process"
        www="$work/www"
        mkdir -p "$www"
        chmod 755 "$work" "$www"
        [ -s "$www/tiny.ts" ] || python3 -c 'import sys; open(sys.argv[1], "wb").write(bytes(752))' "$www/tiny.ts"
        [ -n "${origin:-}" ] || start_nginx "$www"
        rm -rf "$home"
        mkdir -p "$home"
        python3 bench/serve-proxy.py "$streamkit" "$home" "$origin" 5 | tee -a "$results"
        python3 - "$results" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if '"section": "proxy"' in line]
print("| process | first request ms | later median ms | later max ms | first - later ms | origin direct ms |")
print("| ---: | ---: | ---: | ---: | ---: | ---: |")
for row in rows:
    print(f"| {row['size']} | {row['first_ms']:.2f} | {row['later_median_ms']:.2f} | {row['later_max_ms']:.2f} | "
          f"{row['first_ms'] - row['later_median_ms']:.2f} | {row['direct_median_ms']:.2f} |")
PY
        ;;
    live)
        echo "== live: a day of recording (bench-live)"
        swift build -c release --product bench-live >&2
        rm -rf "$home"
        mkdir -p "$home"
        "$(swift build -c release --show-bin-path)/bench-live" "${LIVE_SEGMENTS:-43200}" "$home" | tee "$work/live.jsonl"
        python3 - "$work/live.jsonl" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
blocks = [row for row in rows if "summary" not in row]
summary = next(row for row in rows if "summary" in row)
print("| segments | wall s (these 1,000) | CPU s (these 1,000) | RSS MB |")
print("| ---: | ---: | ---: | ---: |")
for row in blocks:
    if row["segments"] in (1000, 2000) or row["segments"] % 5000 == 0 or row is blocks[-1]:
        print(f"| {row['segments']:,} | {row['wall_s']:.3f} | {row['cpu_s']:.3f} | {row['rss_mb']:.1f} |")
print(f"last 1,000 / first 1,000: wall {summary['last_over_first_wall']:.2f}x, CPU {summary['last_over_first_cpu']:.2f}x"
      f" (target <= 2); RSS {summary['rss_first_mb']:.1f} -> {summary['rss_last_mb']:.1f} MB (target: flat)")
PY
        ;;
    network)
        echo "== network: a far link (bench/network.sh)"
        bench/network.sh
        ;;
    *)
        echo "unknown section: $section" >&2
        exit 64
        ;;
    esac
done
