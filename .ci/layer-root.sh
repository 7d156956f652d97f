#!/usr/bin/env bash
# Makes a Debian forky (testing) root with Mesa 26's lavapipe (Vulkan 1.4) and the Khronos
# validation layer 1.4.363, which checks synchronization across submits and queues (Debian
# 12's 1.3.239 checks only within one command buffer). Needs root and debootstrap; about 40 s
# and 540 MB. Debian 12's debootstrap has no script for forky: it uses sid's, as every suite
# newer than it does.
#   bash .ci/layer-root.sh [ROOT]   (default: $VK_BATON_LAYER_ROOT or /opt/vk-baton-layer-forky)
# A root that exists is reused only if its layer is new enough (MIN_LAYER, forky's): a root
# made earlier from trixie (1.4.309) is refused with a message, never taken for forky's.
# Then run Vulkan programs built here with that driver and layer through .ci/layer-run, e.g.
#   CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER=$PWD/.ci/layer-run cargo test --workspace
set -euo pipefail
root=${1:-${VK_BATON_LAYER_ROOT:-/opt/vk-baton-layer-forky}}
suite=forky
min_layer=1.4.363
manifest=$root/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json

# The layer's version in a root, as its manifest states it ("api_version": "1.4.363").
layer_version() {
  sed -n 's/.*"api_version" *: *"\([0-9.]*\)".*/\1/p' "$manifest" | head -1
}
# Whether version $1 is $2 or newer.
at_least() {
  [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -1)" = "$2" ]
}

if [ -f "$manifest" ]; then
  have=$(layer_version)
  if at_least "$have" "$min_layer"; then
    echo "validation layer in the root $root: $have"
    exit 0
  fi
  echo "the root $root has validation layer ${have:-of unknown version}, older than $suite's $min_layer" >&2
  echo "(made from an older suite?): remove it, or set VK_BATON_LAYER_ROOT to another path" >&2
  exit 1
fi
if [ -e "$root" ] && [ -n "$(ls -A "$root" 2>/dev/null)" ]; then
  echo "$root exists without a validation layer (an interrupted debootstrap?): remove it first" >&2
  exit 1
fi
command -v debootstrap >/dev/null || apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
# The mirror the machine's apt sources name (deb822 or one-line format).
mirror=$(grep -h '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1 | awk '{print $2}' || true)
[ -n "$mirror" ] || mirror=$(grep -h '^deb ' /etc/apt/sources.list 2>/dev/null | head -1 | awk '{print $2}' || true)
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian
script=""
[ -e "/usr/share/debootstrap/scripts/$suite" ] || script=/usr/share/debootstrap/scripts/sid
log=$(mktemp)
if ! debootstrap --variant=minbase \
    --include=mesa-vulkan-drivers,libvulkan1,vulkan-validationlayers \
    "$suite" "$root" "$mirror" $script >"$log" 2>&1; then
  tail -20 "$log"
  echo "debootstrap of the $suite layer root failed" >&2
  exit 1
fi
have=$(layer_version)
echo "validation layer in the root $root: $have"
at_least "$have" "$min_layer" || { echo "expected $min_layer or newer" >&2; exit 1; }
