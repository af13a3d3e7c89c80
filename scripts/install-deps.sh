#!/usr/bin/env bash
# Installs the Debian packages StreamKit builds and tests with, if any is missing (zsh, fish and
# man-db check the completion scripts and the manual page).
# Fast when everything is present: one dpkg query, no network.
set -euo pipefail

packages=(libcurl4-openssl-dev libssl-dev libsqlite3-dev ffmpeg libnginx-mod-rtmp libnginx-mod-stream curl openssl
    rtmpdump tmux time chromium chromium-driver python3-selenium gstreamer1.0-tools gstreamer1.0-plugins-base
    gstreamer1.0-plugins-good gstreamer1.0-plugins-bad gstreamer1.0-libav zsh fish man-db groff-base)
# nginx-light, or any nginx flavour that provides the binary.
nginx_package=nginx-light

missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
    missing+=("$nginx_package")
fi

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "StreamKit needs: ${missing[*]} (Debian package names)." >&2
    echo "This is not a Debian system: install their equivalents, e.g. on macOS:" >&2
    echo "    brew install curl openssl sqlite ffmpeg nginx gstreamer" >&2
    exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "StreamKit needs these Debian packages: ${missing[*]}" >&2
    echo "Run as root:" >&2
    echo "    apt-get update && apt-get install -y ${missing[*]}" >&2
    exit 1
fi

echo "Installing ${missing[*]} ..." >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
