#!/usr/bin/env bash
# Everything that needs the NVIDIA machine (several queue families, real GPU timings), in
# one run. Prepare here with `bash .ci/nvidia-prepare.sh` (release test, bench and example
# binaries in .gl/bin, stripped debug builds of the samples and GPU tests in .gl/debug), then
# on the device machine, from the checkout:
#   bash .gl/on-device.sh bash .ci/nvidia.sh
# Debug builds matter: there `finish()` checks every plan with the verifier.
# Logs go to $OUT (or ./nvidia-out). Every test binary runs with --include-ignored, so the
# multi-family tests run; validation with synchronization validation is on in all of them.
set -uo pipefail
out="${OUT:-nvidia-out}"
mkdir -p "$out"
bin=.gl/bin
# .ci/nvidia-prepare.sh packs the executables to fit the carry limit.
if [ -f .gl/bins.tar.xz ] && [ ! -d "$bin" ]; then tar xJf .gl/bins.tar.xz -C .gl; fi
export VK_BATON_VALIDATION=1
status=0
run() { # name, command...
  local name=$1; shift
  echo "== $name: $*"
  if "$@" >"$out/$name.log" 2>&1; then echo "   ok"; else echo "   FAILED ($?)"; status=1; fi
  grep -E "test result|passed|failed|validation message|message\(s\)|GiB/s|overlap|ratio|frame|chain|queues|interleaved|×|aliasing|lower bound|check:" "$out/$name.log" | tail -14
}
if [ "${NVIDIA_ONLY_PEERS:-0}" = 1 ]; then
  export VK_BATON_VALIDATION=0
  "$bin/vk-baton-peers" --variants >"$out/peers_variants.log" 2>&1
  "$bin/vk-baton-peers" --variants >"$out/peers_variants_2.log" 2>&1
  VK_BATON_VALIDATION=1 "$bin/vk-baton-peers" --explain >"$out/peers_explain.log" 2>&1
  tail -n 20 "$out"/peers_*.log
  exit 0
fi
# NVIDIA_FIGURES=1: a shorter run for the figures after a change to recording or submitting:
# the release GPU tests (validation on), then the frame bench and the streaming table twice
# (validation off).
if [ "${NVIDIA_FIGURES:-0}" = 1 ]; then
  for t in "$bin"/*-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]; do
    name=$(basename "$t")
    case "${name%-*}" in plan|schedule|parallel|random_graphs|samples|vk_baton_shaders|frame) continue ;; esac
    run "test-$name" "$t" --include-ignored --test-threads 1
  done
  for b in "$bin"/frame-*; do
    run frame_validation "$b" --quick
    VK_BATON_VALIDATION=0 run frame_timed "$b"
    VK_BATON_VALIDATION=0 run frame_timed_no_labels "$b" --no-labels
  done
  VK_BATON_VALIDATION=0 run streaming_upload_timed "$bin/streaming_upload" --all-sizes --repeat 5
  VK_BATON_VALIDATION=0 run streaming_upload_timed_2 "$bin/streaming_upload" --all-sizes --repeat 5
  VK_BATON_VALIDATION=0 run deferred_compare_timed "$bin/deferred" --compare --width 1920 --height 1080 --shadow 2048 --frames 200
  VK_BATON_VALIDATION=0 run deferred_compare_timed_held "$bin/deferred" --compare --held --width 1920 --height 1080 --shadow 2048 --frames 200
  exit $status
fi
# The long randomized verifier run uses spare cores while the GPU work runs: 100,000 cases in
# 10 processes of 10,000 (each draws its own proptest seed).
# Tests this machine cannot run: the H100's driver has no VK_KHR_ray_query (lavapipe, in CI,
# runs it).
skips() {
  case "$1" in
    ray_tracing) echo "--skip ray_queries_in_a_compute_shader" ;;
  esac
}
for t in "$bin"/random_graphs-*; do
  for shard in 0 1 2 3 4 5 6 7 8 9; do
    [ -x "$t" ] && (VK_BATON_CASES=10000 timeout "${NVIDIA_RANDOM_SECONDS:-560}" "$t" random_graphs_verify --exact >"$out/random_long_$shard.log" 2>&1; echo "exit $?" >>"$out/random_long_$shard.log") &
  done
done
for t in "$bin"/*-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]; do
  name=$(basename "$t"); base=${name%-*}
  case "$base" in
    plan) continue ;;              # the criterion bench, below
    schedule) continue ;;          # the scheduling bench, below
    parallel) continue ;;          # the multi-threaded recording bench, below
    random_graphs) continue ;;     # in the background, above
    samples) continue ;;           # drives debug example builds; CI runs it on lavapipe
    vk_baton_shaders) continue ;;
  esac
  run "test-$name" "$t" --include-ignored --test-threads 1 $(skips "$base")
done
# Debug builds: the multi-family and GPU tests, and the samples (fewer frames: debug is slow).
dbg=.gl/debug
for t in "$dbg"/*-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]; do
  name=$(basename "$t")
  [ -x "$t" ] && run "debug-test-$name" "$t" --include-ignored --test-threads 1 $(skips "${name%-*}")
done
[ -x "$dbg/headless" ] && run debug_headless "$dbg/headless"
[ -x "$dbg/async_compute" ] && run debug_async_compute "$dbg/async_compute" --frames 24
[ -x "$dbg/async_compute" ] && run debug_async_compute_exclusive "$dbg/async_compute" --exclusive --frames 12
[ -x "$dbg/streaming_upload" ] && run debug_streaming_upload "$dbg/streaming_upload" --all-sizes --scale 0.02 --repeat 1 --min-ms 0
[ -x "$dbg/incremental" ] && run debug_incremental "$dbg/incremental"
[ -x "$dbg/deferred" ] && run debug_deferred "$dbg/deferred" --frames 4
[ -x "$dbg/deferred" ] && run debug_deferred_exclusive "$dbg/deferred" --frames 4 --exclusive
# VK_KHR_maintenance8 (the H100's driver exposes it): ownership transfers with USE_ALL_STAGES,
# waits at the using stages; every plan verified with the flag modelled.
[ -x "$dbg/async_compute" ] && run debug_async_compute_exclusive_m8 "$dbg/async_compute" --exclusive --maintenance8 --frames 12
[ -x "$dbg/deferred" ] && run debug_deferred_exclusive_m8 "$dbg/deferred" --frames 4 --exclusive --maintenance8
# The hand-written frame beside the library's, both validated (Context turns the layer's
# shader-access heuristic on, so hazards through descriptors are checked too).
[ -x "$dbg/deferred" ] && run debug_deferred_compare "$dbg/deferred" --compare --frames 4 --width 640 --height 360
run headless "$bin/headless"
# Which of the extensions the library can use this driver exposes.
[ -x "$bin/device_report" ] && run device_report "$bin/device_report" && grep -E "^(yes|no) " "$out/device_report.log"
[ -x "$bin/async_compute" ] && run async_compute "$bin/async_compute" --frames 200
[ -x "$bin/async_compute" ] && run async_compute_exclusive "$bin/async_compute" --exclusive --frames 20
[ -x "$bin/streaming_upload" ] && run streaming_upload "$bin/streaming_upload" --all-sizes --scale 0.05 --repeat 1 --min-ms 0
[ -x "$bin/incremental" ] && run incremental "$bin/incremental"
[ -x "$bin/deferred" ] && run deferred "$bin/deferred" --width 1920 --height 1080 --shadow 2048 --frames 20
[ -x "$bin/deferred" ] && run deferred_exclusive "$bin/deferred" --width 1920 --height 1080 --shadow 2048 --frames 20 --exclusive
[ -x "$bin/deferred" ] && run deferred_exclusive_m8 "$bin/deferred" --width 1920 --height 1080 --shadow 2048 --frames 20 --exclusive --maintenance8
[ -x "$bin/async_compute" ] && run async_compute_exclusive_m8 "$bin/async_compute" --exclusive --maintenance8 --frames 20
[ -x "$bin/deferred" ] && run deferred_exclusive_general "$bin/deferred" --width 1920 --height 1080 --shadow 2048 --frames 20 --exclusive --general-layouts
[ -x "$dbg/deferred" ] && run debug_deferred_exclusive_general "$dbg/deferred" --frames 4 --exclusive --general-layouts
# The 3-family samples with ownership transfers, without and with maintenance8, alternating,
# timed (validation off): the GPU time each way.
for round in 1 2; do
  [ -x "$bin/async_compute" ] && VK_BATON_VALIDATION=0 run "async_compute_exclusive_timed_$round" "$bin/async_compute" --exclusive --frames 200
  [ -x "$bin/async_compute" ] && VK_BATON_VALIDATION=0 run "async_compute_exclusive_m8_timed_$round" "$bin/async_compute" --exclusive --maintenance8 --frames 200
  [ -x "$bin/deferred" ] && VK_BATON_VALIDATION=0 run "deferred_exclusive_timed_$round" "$bin/deferred" --width 1920 --height 1080 --shadow 2048 --frames 200 --exclusive
  [ -x "$bin/deferred" ] && VK_BATON_VALIDATION=0 run "deferred_exclusive_m8_timed_$round" "$bin/deferred" --width 1920 --height 1080 --shadow 2048 --frames 200 --exclusive --maintenance8
  # Every image use in GENERAL (LayoutPolicy::General) against the table's layouts above.
  [ -x "$bin/deferred" ] && VK_BATON_VALIDATION=0 run "deferred_exclusive_general_timed_$round" "$bin/deferred" --width 1920 --height 1080 --shadow 2048 --frames 200 --exclusive --general-layouts
done
# The figures: validation costs CPU time, so the timed runs go without it.
[ -x "$bin/async_compute" ] && VK_BATON_VALIDATION=0 run async_compute_timed "$bin/async_compute" --frames 200
[ -x "$bin/streaming_upload" ] && VK_BATON_VALIDATION=0 run streaming_upload_timed "$bin/streaming_upload" --all-sizes
[ -x "$bin/deferred" ] && VK_BATON_VALIDATION=0 run deferred_timed "$bin/deferred" --width 1920 --height 1080 --shadow 2048 --frames 200 --png "$out/deferred.png"
# The library's frame against the hand-written one, side by side in one run (CPU and GPU time
# per frame, their ratios, the same picture).
[ -x "$bin/deferred" ] && VK_BATON_VALIDATION=0 run deferred_compare_timed "$bin/deferred" --compare --width 1920 --height 1080 --shadow 2048 --frames 200
# The same with the library side executing a held plan (`--held`: no declaring, lowering or
# planning per frame), the issue's "reused plan" target.
[ -x "$bin/deferred" ] && VK_BATON_VALIDATION=0 run deferred_compare_timed_held "$bin/deferred" --compare --held --width 1920 --height 1080 --shadow 2048 --frames 200
# The same with the hand side writing its descriptor sets every frame, as the library's passes
# must: what of the CPU gap that part is.
[ -x "$bin/deferred" ] && VK_BATON_VALIDATION=0 run deferred_compare_timed_sets "$bin/deferred" --compare --width 1920 --height 1080 --shadow 2048 --frames 200 --hand-write-sets
# The frame-cost bench (graph against the hand-written floor, one run, both sides alternating):
# with validation first (both sides must be clean, the hand side's ownership transfers too),
# then timed without it.
for b in "$bin"/frame-*; do
  run frame_validation "$b" --quick
  VK_BATON_VALIDATION=0 run frame_timed "$b"
  VK_BATON_VALIDATION=0 run frame_timed_no_labels "$b" --no-labels
done
# Scheduling (issue 15): the same frames in program order and reordered, barrier commands,
# batches and times side by side; with validation first (every frame clean), then timed.
for b in "$bin"/schedule-*; do
  run schedule_validation "$b" --quick
  VK_BATON_VALIDATION=0 run schedule_timed "$b"
done
# Multi-threaded recording (issue 11): 1 thread against N, cheap and heavy passes.
for b in "$bin"/parallel-*; do
  run parallel_validation "$b" --quick
  VK_BATON_VALIDATION=0 run parallel_timed "$b" --quick   # the full run is for a run of its own
done
# GPU time against hand-written ash and vk-graph (issue 11), twice to see the spread. About 5
# minutes: a run of its own (NVIDIA_PEERS=1 NVIDIA_ONLY_PEERS=1) keeps the rest under the
# 10-minute limit of one device command.
if [ "${NVIDIA_PEERS:-0}" = 1 ] && [ -x "$bin/vk-baton-peers" ]; then
  VK_BATON_VALIDATION=0 run peers_variants "$bin/vk-baton-peers" --variants
  VK_BATON_VALIDATION=0 run peers_variants_2 "$bin/vk-baton-peers" --variants
  run peers_explain "$bin/vk-baton-peers" --explain
fi
# nvidia-prepare.sh leaves the planning bench out (CI runs it); a prepare.sh-only staging keeps it.
[ "${NVIDIA_SKIP_BENCH:-0}" = 1 ] || for b in "$bin"/plan-*; do
  [ -x "$b" ] || continue
  VK_BATON_VALIDATION=0 run bench "$b" --bench --warm-up-time 1 --measurement-time 3
done
wait
cat "$out"/random_long_*.log | grep -E "test result|exit|FAILED|panicked" | sort | uniq -c
exit $status
