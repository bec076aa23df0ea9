#!/usr/bin/env bash
# Installs Mesa's software Vulkan driver (lavapipe) when no lavapipe ICD is present, so the
# wgpu backend has an adapter to run on a CPU-only machine. Idempotent: does nothing when the
# ICD is already there. Needs root (or sudo) and Debian/Ubuntu's apt for the install.
set -euo pipefail

icd_dirs=(/usr/share/vulkan/icd.d /etc/vulkan/icd.d /usr/local/share/vulkan/icd.d)

find_lavapipe() {
    local d
    for d in "${icd_dirs[@]}"; do
        if compgen -G "$d/lvp_icd*.json" >/dev/null; then
            ls "$d"/lvp_icd*.json | head -n 1
            return 0
        fi
    done
    return 1
}

if icd=$(find_lavapipe); then
    echo "setup-lavapipe: lavapipe ICD already present: $icd (nothing to do)"
    exit 0
fi

if ! command -v apt-get >/dev/null; then
    echo "setup-lavapipe: no lavapipe ICD and no apt-get; install Mesa's Vulkan drivers (lavapipe) by hand" >&2
    exit 1
fi

sudo=""
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null; then
        sudo="sudo"
    else
        echo "setup-lavapipe: need root to install mesa-vulkan-drivers; rerun as root" >&2
        exit 1
    fi
fi

echo "setup-lavapipe: no lavapipe ICD found in ${icd_dirs[*]}"
echo "setup-lavapipe: running: apt-get update"
$sudo env DEBIAN_FRONTEND=noninteractive apt-get update
echo "setup-lavapipe: running: apt-get install -y mesa-vulkan-drivers libvulkan1"
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends mesa-vulkan-drivers libvulkan1

if icd=$(find_lavapipe); then
    echo "setup-lavapipe: installed lavapipe ICD: $icd"
else
    echo "setup-lavapipe: mesa-vulkan-drivers installed but no lvp_icd*.json found" >&2
    exit 1
fi
