#!/usr/bin/env bash
# Benchmark: parse a 100,000-segment HLS media playlist (keys, byte ranges, date-times) with StreamKit's HLS
# module and with the Python m3u8 package (PyPI), side by side on the same file in the same run; and
# `streamkit inspect --json FILE > /dev/null` (parse, resolve, write the JSON) as a whole process beside the
# m3u8 process that only loads the file.
#
#   bench/hls-parse.sh            # SEGMENTS=100000 RUNS=10 by default
#
# Targets (issue 3): at least 30x faster than m3u8, at least 150 MB/s, peak RSS at most 4x the file size.
# Target (issue 20): the whole `inspect --json` process at least 10x faster than the m3u8 process (CPU time).
# Prints one table; the raw JSON lines are kept in bench/work/hls-parse/results.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."

segments=${SEGMENTS:-100000}
runs=${RUNS:-10}
work=bench/work/hls-parse
mkdir -p "$work"
results="$work/results.jsonl"
: >"$results"

echo "== machine: $(nproc) cores, $(uptime | sed 's/.*load average/load average/')"
echo "== generating playlists"
python3 bench/generate-hls-playlist.py --segments "$segments" --key-every 10 --output "$work/keys-every-10.m3u8"
python3 bench/generate-hls-playlist.py --segments "$segments" --key-every 1000 --output "$work/keys-every-1000.m3u8"
printf '#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-ENDLIST\n' >"$work/empty.m3u8"

echo "== building bench-hls-parse (release)"
swift build -c release --product bench-hls-parse -Xswiftc -warnings-as-errors >&2
ours=.build/release/bench-hls-parse
. bench/build-streamkit.sh
streamkit="$bin/streamkit"

if [ ! -x bench/work/venv/bin/python ] || ! bench/work/venv/bin/python -c 'import m3u8' 2>/dev/null; then
    echo "== installing m3u8 into bench/work/venv"
    python3 -m venv bench/work/venv
    bench/work/venv/bin/pip install --quiet m3u8
fi
python=bench/work/venv/bin/python
echo "== m3u8 $($python -c 'import importlib.metadata as m; print(m.version("m3u8"))'), $(python3 --version)"

for playlist in keys-every-10 keys-every-1000; do
    file="$work/$playlist.m3u8"
    echo "== $playlist: $(stat -c %s "$file") bytes; $(uptime | sed 's/.*load average/load average/')"
    # In process: the parse alone, best of $runs for StreamKit (one run of m3u8 takes seconds).
    "$ours" --runs "$runs" --parse-only "$file" | sed "s/^{/{\"playlist\":\"$playlist\",\"mode\":\"parse\",/" | tee -a "$results"
    "$ours" --runs 3 "$file" | sed "s/^{/{\"playlist\":\"$playlist\",\"mode\":\"parse+resolve\",/" | tee -a "$results"
    "$python" bench/m3u8-parse.py --runs 1 "$file" | sed "s/^{/{\"playlist\":\"$playlist\",\"mode\":\"parse\",/" | tee -a "$results"
    # Whole processes through GNU time: wall, CPU and peak RSS.
    for _ in 1 2 3; do
        bench/measure.py --label streamkit -- "$ours" "$file" | grep '^{' |
            sed "s/^{/{\"playlist\":\"$playlist\",\"mode\":\"process\",/" | tee -a "$results"
    done
    bench/measure.py --label m3u8 -- "$python" bench/m3u8-parse.py "$file" | grep '^{' |
        sed "s/^{/{\"playlist\":\"$playlist\",\"mode\":\"process\",/" | tee -a "$results"
    # The whole inspect --json process, its output thrown away (exec: the shell adds no CPU of its own).
    echo "== $playlist: streamkit inspect --json writes $("$streamkit" inspect --json "$file" | wc -c) bytes"
    for _ in 1 2 3; do
        bench/measure.py --label streamkit-inspect-json -- sh -c 'exec "$0" inspect --json "$1" >/dev/null' \
            "$streamkit" "$file" | grep '^{' |
            sed "s/^{/{\"playlist\":\"$playlist\",\"mode\":\"inspect-json\",/" | tee -a "$results"
    done
done
bench/measure.py --label streamkit -- "$ours" "$work/empty.m3u8" | grep '^{' |
    sed 's/^{/{"playlist":"empty","mode":"process",/' | tee -a "$results"

python3 - "$results" "$work" <<'PY'
import json, os, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
work = sys.argv[2]
def pick(playlist, mode, label):
    return [r for r in rows if r.get("playlist") == playlist and r.get("mode") == mode and r["label"].startswith(label)]
baseline = pick("empty", "process", "streamkit")[0]["max_rss_mb"]
print()
print("| playlist | file | StreamKit parse (best) | MB/s | m3u8 parse | ratio (parse) | StreamKit process wall / CPU | m3u8 process wall / CPU | ratio (CPU) | StreamKit peak RSS | RSS / file |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for playlist in ["keys-every-10", "keys-every-1000"]:
    size = os.path.getsize(os.path.join(work, playlist + ".m3u8"))
    ours = pick(playlist, "parse", "streamkit")[0]
    theirs = pick(playlist, "parse", "m3u8")[0]
    ours_process = pick(playlist, "process", "streamkit")
    theirs_process = pick(playlist, "process", "m3u8")[0]
    best_wall = min(r["wall_s"] for r in ours_process)
    best_cpu = min(r["cpu_s"] for r in ours_process)
    peak = max(r["max_rss_mb"] for r in ours_process)
    print(f"| {playlist} | {size / 1e6:.1f} MB | {ours['parse_min_s'] * 1000:.0f} ms | {ours['mb_per_s']} | "
          f"{theirs['parse_min_s']:.2f} s | {theirs['parse_min_s'] / ours['parse_min_s']:.0f}x | "
          f"{best_wall:.2f} s / {best_cpu:.2f} s | {theirs_process['wall_s']:.2f} s / {theirs_process['cpu_s']:.2f} s | "
          f"{theirs_process['cpu_s'] / max(best_cpu, 0.01):.0f}x | {peak} MB | {peak * 2**20 / size:.2f}x |")
print(f"\nProcess baseline (an empty playlist): {baseline} MB peak RSS.")
print()
print("| playlist | `streamkit inspect --json` process wall / CPU (best of 3) | peak RSS | m3u8 process wall / CPU | ratio (wall) | ratio (CPU) |")
print("| --- | --- | --- | --- | --- | --- |")
for playlist in ["keys-every-10", "keys-every-1000"]:
    inspect = pick(playlist, "inspect-json", "streamkit")
    theirs_process = pick(playlist, "process", "m3u8")[0]
    best_wall = min(r["wall_s"] for r in inspect)
    best_cpu = min(r["cpu_s"] for r in inspect)
    peak = max(r["max_rss_mb"] for r in inspect)
    print(f"| {playlist} | {best_wall:.3f} s / {best_cpu:.3f} s | {peak} MB | "
          f"{theirs_process['wall_s']:.2f} s / {theirs_process['cpu_s']:.2f} s | "
          f"{theirs_process['wall_s'] / best_wall:.1f}x | {theirs_process['cpu_s'] / max(best_cpu, 0.001):.1f}x |")
PY
