#!/usr/bin/env bash
# Copies what a GPU machine runs out of a build folder (the tool, the test
# binaries, tests/gpu's tools) into .device-build/<build>, keeping the layout,
# so that device_run.sh can run there with CFR_BUILD_DIR=.device-build/<build>
# and the copy stays under a transfer limit (object files stay behind).
# Only what runs on the GPU machine travels: the tool, the test binaries with
# GPU cases (CI runs the others), and those of tests/gpu's tools named after
# the build folder (each binary carries the kernels' device code, ~10 MB).
# usage: tests/gpu/pack_build.sh [build-dir [tool ...]]   (default build-h200;
#        tools: fa2_variants fa2bwd_variants single_launch ncu_nvtx_probe decode_dev fa3_rows
#        l2_loop_probe launch_floor)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-h200}
shift || true
dest=.device-build/$build
wanted=(app/cuflash-roofline tests/kernels/test_kernels)
for tool in "$@"; do wanted+=("tests/gpu/$tool"); done
# Everything packed is built from the tree as it is now (tests/gpu's tools
# are not built by default, tests/gpu/meson.build), so the stamp read next
# is that of every binary packed; ninja's errors go to stderr.
ninja -C "$build" all "${wanted[@]:2}" >&2 || { echo "pack_build.sh: cannot build $build" >&2; exit 1; }
# A tool built from a tree with uncommitted changes (`git describe --dirty`,
# stamped at build time) writes every report `auditable: false`: commit,
# rebuild, then pack.
version=$("$build/app/cuflash-roofline" --version 2>/dev/null || echo unknown-dirty)
if [[ -z ${CFR_ALLOW_DIRTY:-} && $version == *dirty* ]]; then
  echo "pack_build.sh: $build was built from a tree with uncommitted changes ($version);" \
    "its reports would not be auditable. Commit first (CFR_ALLOW_DIRTY=1 packs anyway)." >&2
  exit 1
fi
rm -rf "$dest"
mkdir -p "$dest"
(cd "$build" && for binary in "${wanted[@]}" tests/*/test_*gpu*; do
  if [[ -f $binary ]]; then cp --parents "$binary" "../$dest/"; fi
done)
# The peer script's tree stamp (which commit the tree is) and plugin libraries.
# meson puts them in build/kernels/plugin/example/ and build/tests/kernels/plugins/.
(cd "$build" && find peers kernels tests -maxdepth 4 \( -name tree_stamp.json -o -name '*.so' \) -print0 2>/dev/null |
  xargs -0 -r -I{} cp --parents {} "../$dest/")
du -sh "$dest"
# The device code does not shrink a binary's size; gzip packs the tree ~4:1,
# xz -9 ~20:1 (75 MB -> 3.8 MB), which keeps the carry with the tracked
# results under the transfer limit. Unpack there with
#   tar xJf .device-build/BUILD.txz -C .device-build
tar cf - -C .device-build "$build" | xz -9 -T0 >".device-build/$build.txz"
du -sh ".device-build/$build.txz"
