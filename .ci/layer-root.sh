#!/usr/bin/env bash
# Makes a Debian 13 root with Mesa 25's lavapipe (Vulkan 1.4) and the Khronos validation layer
# 1.4.309, which checks synchronization across submits and queues (Debian 12's 1.3.239 checks
# only within one command buffer). Needs root and debootstrap; about 40 s and 540 MB.
#   bash .ci/layer-root.sh [ROOT]        (default: $VK_BATON_LAYER_ROOT or /opt/vk-baton-layer)
# Then run Vulkan programs built here with that driver and layer through .ci/layer-run, e.g.
#   CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER=$PWD/.ci/layer-run cargo test --workspace
set -euo pipefail
root=${1:-${VK_BATON_LAYER_ROOT:-/opt/vk-baton-layer}}
if [ -f "$root/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json" ]; then
  exit 0
fi
command -v debootstrap >/dev/null || apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
# The mirror the machine's apt sources name (deb822 or one-line format).
mirror=$(grep -h '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1 | awk '{print $2}' || true)
[ -n "$mirror" ] || mirror=$(grep -h '^deb ' /etc/apt/sources.list 2>/dev/null | head -1 | awk '{print $2}' || true)
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian
log=$(mktemp)
if ! debootstrap --variant=minbase \
    --include=mesa-vulkan-drivers,libvulkan1,vulkan-validationlayers \
    trixie "$root" "$mirror" >"$log" 2>&1; then
  tail -20 "$log"
  echo "debootstrap of the layer root failed" >&2
  exit 1
fi
grep -h '"api_version"' "$root"/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json \
  | sed 's/^ */validation layer in the root: /'
