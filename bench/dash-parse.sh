#!/usr/bin/env bash
# Benchmark: an MPD whose SegmentTimeline lists 100,000 segments, read by `streamkit inspect
# --json` (parse, resolve every segment to its URL and time, write the JSON, output thrown away)
# and by the Python `mpegdash` package from PyPI (parse into its object model only), both as
# whole processes through bench/measure.py, side by side in one run.
#
#   bench/dash-parse.sh             # SEGMENTS=100000 RUNS=3 by default
#
# Target (issue 23): streamkit's whole process at least 10x faster than mpegdash's (CPU time),
# though it does more (resolution and JSON), with a peak RSS under 4x mpegdash's.
set -euo pipefail
cd "$(dirname "$0")/.."

segments=${SEGMENTS:-100000}
runs=${RUNS:-3}
work=bench/work/dash-parse
mkdir -p "$work"
results="$work/results.jsonl"
: >"$results"

echo "== machine: $(nproc) cores, $(uptime | sed 's/.*load average/load average/')"
# One S per segment (t and d written, durations alternating so that no r can fold them), two
# Representations sharing the AdaptationSet's template, as a long live-to-VOD recording has.
python3 - "$segments" "$work/timeline.mpd" <<'PY'
import sys
count, path = int(sys.argv[1]), sys.argv[2]
with open(path, "w") as out:
    out.write('<?xml version="1.0" encoding="utf-8"?>\n')
    out.write('<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" profiles="urn:mpeg:dash:profile:isoff-live:2011" ')
    out.write(f'mediaPresentationDuration="PT{count * 2}S" minBufferTime="PT2S">\n')
    out.write('<BaseURL>https://cdn.example.com/show/</BaseURL>\n<Period id="0">\n')
    out.write('<AdaptationSet id="0" contentType="video" mimeType="video/mp4" segmentAlignment="true">\n')
    out.write('<SegmentTemplate timescale="90000" initialization="$RepresentationID$/init.mp4" ')
    out.write('media="$RepresentationID$/$Time$.m4s">\n<SegmentTimeline>\n')
    t = 0
    for i in range(count):
        d = 180000 if i % 2 == 0 else 180090
        out.write(f'<S t="{t}" d="{d}"/>\n')
        t += d
    out.write('</SegmentTimeline>\n</SegmentTemplate>\n')
    out.write('<Representation id="hd" bandwidth="5000000" codecs="avc1.640028" width="1920" height="1080"/>\n')
    out.write('<Representation id="sd" bandwidth="1500000" codecs="avc1.64001f" width="960" height="540"/>\n')
    out.write('</AdaptationSet>\n</Period>\n</MPD>\n')
PY
file="$work/timeline.mpd"
echo "== $segments segments, $(stat -c %s "$file") bytes"

. bench/build-streamkit.sh
streamkit="$bin/streamkit"
if [ ! -x bench/work/venv/bin/python ] || ! bench/work/venv/bin/python -c 'import mpegdash' 2>/dev/null; then
    echo "== installing mpegdash into bench/work/venv"
    python3 -m venv bench/work/venv
    bench/work/venv/bin/pip install --quiet mpegdash
fi
python=bench/work/venv/bin/python
echo "== mpegdash $($python -c 'import importlib.metadata as m; print(m.version("mpegdash"))'), $(python3 --version)"
echo "== streamkit inspect --json writes $("$streamkit" inspect --json "$file" | wc -c) bytes"
"$python" -c 'import sys; from mpegdash.parser import MPEGDASHParser
mpd = MPEGDASHParser.parse(sys.argv[1])
print("== mpegdash reads", len(mpd.periods[0].adaptation_sets[0].segment_templates[0].segment_timelines[0].Ss), "S elements")' "$file"

for _ in $(seq "$runs"); do
    bench/measure.py --label streamkit-inspect-json -- sh -c 'exec "$0" inspect --json "$1" >/dev/null' \
        "$streamkit" "$file" | grep '^{' | tee -a "$results"
    bench/measure.py --label mpegdash-parse -- "$python" -c \
        'import sys; from mpegdash.parser import MPEGDASHParser; MPEGDASHParser.parse(sys.argv[1])' "$file" |
        grep '^{' | tee -a "$results"
done

python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
by = {}
for row in rows:
    if row["status"] != 0:
        sys.exit(f"{row['label']} exited with {row['status']}")
    by.setdefault(row["label"], []).append(row)
def med(label, key): return statistics.median(r[key] for r in by[label])
print(f"{'process':<24} {'wall s':>8} {'CPU s':>8} {'RSS MB':>8}")
for label in by:
    print(f"{label:<24} {med(label,'wall_s'):>8.3f} {med(label,'cpu_s'):>8.3f} {med(label,'max_rss_mb'):>8.1f}")
ours, theirs = "streamkit-inspect-json", "mpegdash-parse"
print(f"CPU mpegdash / streamkit:  {med(theirs,'cpu_s') / med(ours,'cpu_s'):.1f}x  (target >= 10)")
print(f"RSS streamkit / mpegdash:  {med(ours,'max_rss_mb') / med(theirs,'max_rss_mb'):.2f}  (target <= 4)")
PY
