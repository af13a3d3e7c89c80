#!/usr/bin/env bash
# Makes the sample stream `streamkit demo` serves from its embedded origin:
# a master playlist with two video variants (the higher one AES-128 encrypted) and an alternate
# English audio track, ten seconds, well under 2 MB; and the same clear video and audio as DASH
# (`dash/manifest.mpd`, fragmented MP4, SegmentTemplate with a SegmentTimeline). Run from the
# repository root:
#
#     scripts/make-demo-sample.sh [OUTPUT_DIR]     # default Sources/StreamKitCLI/DemoSample
#
# Needs ffmpeg (libx264, aac) and openssl. The output is committed; rerun only to change it.
set -euo pipefail
dash_only=false
if [ "${1:-}" = "--dash-only" ]; then dash_only=true; shift; fi
out=${1:-Sources/StreamKitCLI/DemoSample}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

common=(-nostdin -hide_banner -loglevel error -y)
video=(-c:v libx264 -preset veryfast -profile:v main -pix_fmt yuv420p -g 50 -keyint_min 50 -sc_threshold 0)
hls=(-f hls -hls_time 2 -hls_playlist_type vod)

# DASH: the clear variant and the audio, stream-copied (the same frames) into fragmented MP4.
# `scripts/make-demo-sample.sh --dash-only` remakes only this part from the committed HLS.
make_dash() {
    rm -rf "$out/dash"
    mkdir -p "$out/dash"
    (cd "$out" && ffmpeg "${common[@]}" -i low/index.m3u8 -i audio/index.m3u8 -map 0:v -map 1:a -c copy -tag:v avc1 -tag:a mp4a \
        -metadata:s:a:0 language=eng -f dash -seg_duration 2 -use_template 1 -use_timeline 1 \
        -adaptation_sets "id=0,streams=v id=1,streams=a" -init_seg_name 'init-$RepresentationID$.m4s' \
        -media_seg_name 'chunk-$RepresentationID$-$Number%05d$.m4s' dash/manifest.mpd)
}
if $dash_only; then
    make_dash
    du -sh "$out/dash"
    exit 0
fi

# Video variants: the same test card at two sizes, no audio (the audio is its own rendition).
ffmpeg "${common[@]}" -f lavfi -i "testsrc2=size=320x180:rate=25" -t 10 "${video[@]}" -b:v 150k -maxrate 150k \
    -bufsize 300k -an "${hls[@]}" -hls_segment_filename "$work/low_%02d.ts" "$work/low.m3u8"
ffmpeg "${common[@]}" -f lavfi -i "testsrc2=size=640x360:rate=25" -t 10 "${video[@]}" -b:v 400k -maxrate 400k \
    -bufsize 800k -an "${hls[@]}" -hls_segment_filename "$work/high_%02d.ts" "$work/high.m3u8"
# Alternate audio: a tone that rises each second, so a listener hears the position.
ffmpeg "${common[@]}" -f lavfi -i "aevalsrc=0.2*sin(2*PI*(440+110*floor(t))*t):s=44100" -t 10 -c:a aac -b:a 64k \
    "${hls[@]}" -hls_segment_filename "$work/audio_%02d.ts" "$work/audio.m3u8"

rm -rf "$out"
mkdir -p "$out/low" "$out/high" "$out/audio"
for name in low audio; do
    cp "$work/${name}_"*.ts "$work/$name.m3u8" "$out/$name/"
    mv "$out/$name/$name.m3u8" "$out/$name/index.m3u8"
done

# The high variant is AES-128: a fixed key (it is a demo) and no IV attribute, so the IV is the
# media sequence number (RFC 8216bis 5.2), encrypted here with openssl.
key=000102030405060708090a0b0c0d0e0f
printf '%s' "$key" | xxd -r -p > "$out/high/key.bin"
sequence=0
while IFS= read -r line; do
    case "$line" in
    "#EXT-X-MEDIA-SEQUENCE:"*)
        printf '%s\n#EXT-X-KEY:METHOD=AES-128,URI="key.bin"\n' "$line" ;;
    high_*.ts)
        iv=$(printf '%032x' "$sequence")
        openssl enc -aes-128-cbc -K "$key" -iv "$iv" -in "$work/$line" -out "$out/high/$line"
        sequence=$((sequence + 1))
        printf '%s\n' "$line" ;;
    *) printf '%s\n' "$line" ;;
    esac
done < "$work/high.m3u8" > "$out/high/index.m3u8"

# CODECS from the streams themselves: avc1.PPCCLL (Main profile 4d, constraint flags 40, level).
codec() { printf "avc1.4d40%02x" "$(ffprobe -v error -select_streams v:0 -show_entries stream=level -of csv=p=0 "$1" | head -n 1)"; }
# BANDWIDTH from the largest segment (peak) and the total (average), audio included, in bit/s.
rates() {
    local peak=0 total=0 count=0 size
    for file in "$work/$1"_*.ts; do
        size=$(stat -c %s "$file"); total=$((total + size)); count=$((count + 1))
        [ "$size" -gt "$peak" ] && peak=$size
    done
    local audio=$((64000 * 11 / 10))
    echo "BANDWIDTH=$((peak * 8 / 2 + audio)),AVERAGE-BANDWIDTH=$((total * 8 / (count * 2) + audio))"
}
cat > "$out/master.m3u8" <<M3U8
#EXTM3U
#EXT-X-VERSION:3
#EXT-X-INDEPENDENT-SEGMENTS
#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",NAME="English",LANGUAGE="en",DEFAULT=YES,AUTOSELECT=YES,URI="audio/index.m3u8"
#EXT-X-STREAM-INF:$(rates low),RESOLUTION=320x180,FRAME-RATE=25,CODECS="$(codec "$work/low_00.ts"),mp4a.40.2",AUDIO="audio"
low/index.m3u8
#EXT-X-STREAM-INF:$(rates high),RESOLUTION=640x360,FRAME-RATE=25,CODECS="$(codec "$work/high_00.ts"),mp4a.40.2",AUDIO="audio"
high/index.m3u8
M3U8
make_dash
du -sh "$out"
