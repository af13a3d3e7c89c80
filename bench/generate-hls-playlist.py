#!/usr/bin/env python3
"""Write a large HLS media playlist for bench/hls-parse.sh.

    bench/generate-hls-playlist.py --segments 100000 --output FILE

Every segment has EXT-X-PROGRAM-DATE-TIME, EXTINF and EXT-X-BYTERANGE; an AES-128 EXT-X-KEY rotates every
--key-every segments (10 by default; with an explicit IV every other rotation); the segments are byte ranges of media files of 1,000
segments each, the offset written on the first range of a file and carried over on the others.
"""
import argparse
from datetime import datetime, timedelta, timezone


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--segments", type=int, default=100_000)
    parser.add_argument("--key-every", type=int, default=10)
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    start = datetime(2024, 5, 1, 12, 0, 0, tzinfo=timezone.utc)
    lines = [
        "#EXTM3U",
        "#EXT-X-VERSION:7",
        "#EXT-X-TARGETDURATION:7",
        "#EXT-X-MEDIA-SEQUENCE:1000",
        "#EXT-X-PLAYLIST-TYPE:VOD",
        "#EXT-X-INDEPENDENT-SEGMENTS",
        '#EXT-X-MAP:URI="init.mp4",BYTERANGE="1024@0"',
    ]
    offset = 0
    for index in range(args.segments):
        if index % args.key_every == 0:
            rotation = index // args.key_every
            key = f'#EXT-X-KEY:METHOD=AES-128,URI="https://keys.example.com/v1/key/{rotation}?token=a1b2c3d4"'
            if rotation % 2 == 0:
                key += f",IV=0x{rotation:032X}"
            lines.append(key)
        date = start + timedelta(milliseconds=6006 * index)
        lines.append("#EXT-X-PROGRAM-DATE-TIME:" + date.strftime("%Y-%m-%dT%H:%M:%S.") + f"{date.microsecond // 1000:03d}Z")
        lines.append("#EXTINF:6.006,")
        length = 500_000 + (index * 7919) % 250_000
        if index % 1000 == 0:
            offset = 0
            lines.append(f"#EXT-X-BYTERANGE:{length}@{offset}")
        else:
            lines.append(f"#EXT-X-BYTERANGE:{length}")
        offset += length
        lines.append(f"media-{index // 1000:05d}.mp4")
    lines.append("#EXT-X-ENDLIST")
    with open(args.output, "w", encoding="utf-8") as output:
        output.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
