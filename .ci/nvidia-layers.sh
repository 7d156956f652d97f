#!/usr/bin/env bash
# The NVIDIA run under Debian's two newer validation layers at once: every GPU test binary with
# --include-ignored (so the multi-family tests run) and the samples, in release and debug builds,
# under layers 1.4.309 (trixie) and 1.4.363 (forky), eight binaries at a time (about 4 minutes).
# Stage here: release test binaries in .gl/bin and stripped debug ones in .gl/debug, packed as
# .gl/*.tar.xz; the loader and glvnd .debs in .gl/ (../shared/device/prepare.sh fetches them),
# and each layer's .debs in .gl/vvl-trixie and .gl/vvl-forky (apt-get download libvulkan1
# vulkan-validationlayers from that suite). On the device, carrying .gl:
#   bash .ci/nvidia-layers.sh "trixie forky" "bin debug" [filter-regex]
# Each layer is unpacked into a prefix of its own (/opt/vvl-SUITE), so both run side by side;
# logs go to $OUT/logs.tgz, one per suite, build and binary.
set -u
here=$(cd "$(dirname "$0")/../.gl" && pwd)
suites=${1:-"trixie forky"}; dirs=${2:-bin}; only=${3:-.}
out=${OUT:-/tmp/out}; mkdir -p "$out/logs"
for f in "$here"/*.deb; do dpkg -x "$f" /; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
export VK_BATON_VALIDATION=1
nvidia-smi -L
for a in "$here"/*.tar.xz; do tar xJf "$a" -C "$here"; done
for suite in $suites; do
  p=/opt/vvl-$suite; mkdir -p $p
  for f in "$here"/vvl-$suite/*.deb; do dpkg -x "$f" $p; done
  grep -h '"api_version"' $p/usr/share/vulkan/explicit_layer.d/*.json | head -1
done
one() { # suite dir path
  local suite=$1 d=$2 t=$3 p=/opt/vvl-$1 name base args log
  name=$(basename "$t"); base=${name%-*}
  log="$out/logs/$suite-$d-$name.log"
  case "$base" in
    headless) args="";; async_compute) args="--exclusive --frames 12";; deferred) args="--exclusive --frames 4";;
    incremental) args="";; streaming_upload) args="--all-sizes --scale 0.02 --repeat 1 --min-ms 0";;
    device_report) args="";; *) args="--include-ignored --test-threads 1";;
  esac
  LD_LIBRARY_PATH=$p/usr/lib/x86_64-linux-gnu VK_LAYER_PATH=$p/usr/share/vulkan/explicit_layer.d \
    timeout 400 "$t" $args >"$log" 2>&1
  echo "$suite $d $base rc=$? $(grep -E '^test result' "$log" | tail -1) $(grep -ciE 'SYNC-HAZARD|VUID-|hazard detected' "$log") msgs $(grep -c SKIPPED "$log") skipped"
}
export -f one; export out
jobs=()
for suite in $suites; do for d in $dirs; do for t in "$here/$d"/*; do
  [ -x "$t" ] || continue
  b=$(basename "$t"); echo "${b%-*}" | grep -Eq "$only" || continue
  jobs+=("$suite $d $t")
done; done; done
printf '%s\n' "${jobs[@]}" | xargs -P 8 -L 1 bash -c 'one "$@"' _ | sort
cd "$out" && tar czf logs.tgz logs && rm -rf logs
