#!/usr/bin/env bash
# Stage everything .ci/nvidia.sh runs on the NVIDIA machine, in release AND debug builds
# (debug builds are where `finish()` verifies every plan):
#   bash .ci/nvidia-prepare.sh
# 1. ../shared/device/prepare.sh: the Vulkan loader, glvnd, the validation layer and the
#    release test, bench and example executables, in .gl/ and .gl/bin/;
# 2. the debug executables of the samples and of the test binaries, stripped, in .gl/debug/
#    (unstripped debug binaries are ~23 MB each; everything carried must fit in 64 MiB, so
#    both folders travel packed in .gl/bins.tar.xz).
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
# NVIDIA_DEBUG_ONLY=1 stages only the debug builds (with the loader and layer packages).
if [ "${NVIDIA_DEBUG_ONLY:-0}" = 1 ]; then
  bash "$root/../shared/device/prepare.sh" --example headless
  rm -f .gl/bin/*
else
  bash "$root/../shared/device/prepare.sh"
fi
mkdir -p .gl/debug
rm -f .gl/debug/*
cargo build --workspace --all-targets --message-format=json \
  | python3 -c '
import json, sys, shutil, os
keep_examples = {"headless", "async_compute", "streaming_upload", "incremental", "deferred"}
for line in sys.stdin:
    try: m = json.loads(line)
    except ValueError: continue
    if m.get("reason") != "compiler-artifact" or not m.get("executable"):
        continue
    kind = m["target"]["kind"][0]
    name = m["target"]["name"]
    if kind == "example" and name not in keep_examples:
        continue
    # Debug: the samples and the GPU tests that need several families or run whole graphs.
    if kind == "example" or name in ("gpu", "render", "multi_family", "stream", "handoff", "held_plan", "transients", "scheduling", "gpu_timings", "parallel_recording", "raster_matrix", "render_pass", "app_signals", "ray_tracing", "general_layouts", "compute") or (kind == "test" and name == "replay"):
        dst = os.path.join(".gl/debug", os.path.basename(m["executable"]))
        shutil.copy2(m["executable"], dst)
        print("staged", dst, kind)
'
# Not run there: the window sample (no display), tests/samples.rs (drives cargo builds), the
# shaders crate (no tests). Leaving them out keeps the carry under 64 MiB.
rm -f .gl/bin/window .gl/bin/samples-* .gl/bin/vk_baton_shaders-*
# CPU-only checks CI already runs (the unit tests, the simulated topologies, the mutation test, the
# planning bench): left out too. The GPU tests, the samples, the random suite's long mode and the
# frame bench stay.
rm -f .gl/bin/vk_baton-* .gl/bin/vk_baton_passes-* .gl/bin/simulated-* .gl/bin/mutation-* \
  .gl/bin/plan-* .gl/bin/support-* .gl/bin/vk_baton_examples-*
# The peer comparison (peers/, not a workspace member): vk-baton against hand-written ash and
# vk-graph, GPU time per frame (issue 11).
# peers/ is its own workspace, so it builds into peers/target, not the workspace's target/
# (unless CARGO_TARGET_DIR or a cargo config says otherwise): ask cargo where.
cargo build --release --manifest-path peers/Cargo.toml
peers_target=$(cargo metadata --manifest-path peers/Cargo.toml --format-version 1 --no-deps \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
cp "$peers_target/release/vk-baton-peers" .gl/bin/
strip .gl/debug/*
find .gl/bin -type f -exec strip {} +
du -sh .gl .gl/bin .gl/debug
# Stripped executables still pass 64 MiB together; xz packs them to about a tenth.
# .ci/nvidia.sh unpacks them on the device.
tar cJf .gl/bins.tar.xz -C .gl bin debug
rm -rf .gl/bin .gl/debug
du -sh .gl
