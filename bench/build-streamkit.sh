# Sourced by the benchmarks: builds `streamkit` in release mode and sets $bin to the folder that
# holds it. STREAMKIT_LINK=static (the default) links the Swift runtime into the executable, as
# a Linux command-line tool is shipped; STREAMKIT_LINK=dynamic uses the toolchain's shared
# libraries, whose pages count in a process's RSS (about 5 MB more).
if [ "${STREAMKIT_LINK:-static}" = static ]; then
    echo "building streamkit (release, static Swift runtime) ..." >&2
    swift build -c release --static-swift-stdlib --product streamkit --build-path .build/static >&2
    bin=$(pwd)/.build/static/release
else
    echo "building streamkit (release, shared Swift runtime) ..." >&2
    swift build -c release --product streamkit >&2
    bin=$(swift build -c release --show-bin-path)
fi
