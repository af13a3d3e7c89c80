#!/usr/bin/env bash
# Build and run one libFuzzer target: Fuzz/run.sh NAME [libFuzzer options...]
#   e.g. Fuzz/run.sh HTTPHeaderValues -max_total_time=600
# The package's library modules are built by SwiftPM with coverage instrumentation
# (-sanitize=fuzzer), then Fuzz/NAME/main.swift is linked against them with libFuzzer and
# AddressSanitizer. Crashes land in Fuzz/build/NAME/ as crash-*; the corpus in Fuzz/corpus-NAME/.
set -euo pipefail
cd "$(dirname "$0")/.."

name=${1:?usage: Fuzz/run.sh NAME [libFuzzer options...]}
shift
source_file="Fuzz/$name/main.swift"
[ -f "$source_file" ] || { echo "no fuzz target $source_file" >&2; exit 64; }

build=Fuzz/build
# Every package module the target imports (SwiftPM builds their dependencies too).
modules=$(grep -hoE '^import [A-Za-z]+' "$source_file" | awk '{print $2}' | grep -vE '^(Foundation|Glibc|Darwin)$' | sort -u)
sanitize=(-Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library)
for module in $modules; do
    swift build -c release --build-path "$build/spm" --target "$module" "${sanitize[@]}" >&2
done

# Link every library module built so far (the imported ones and their dependencies).
objects=()
for directory in "$build/spm/release/"*.build; do
    case "$directory" in *Tests.build | */streamkit.build | */StreamKitPackage*) continue ;; esac
    compgen -G "$directory/*.o" >/dev/null && objects+=("$directory/"*.o)
done
mkdir -p "$build/$name" "Fuzz/corpus-$name"
# Every C shim's module map, so that modules depending on them can be imported.
shims=()
for shim in Sources/C*/; do shims+=(-I "${shim%/}"); done
swiftc -O -sanitize=fuzzer,address -parse-as-library \
    -I "$build/spm/release/Modules" "${shims[@]}" \
    "$source_file" "${objects[@]}" -lcrypto -lsqlite3 -lcurl -o "$build/$name/fuzz"

cd "$build/$name"
exec ./fuzz "$@" "../../corpus-$name"
