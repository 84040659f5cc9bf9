#!/usr/bin/env bash
# Copies what a GPU machine runs out of a build folder (the tool, the test
# binaries, tests/gpu's tools) into .device-build/<build>, keeping the layout,
# so that device_run.sh can run there with CFR_BUILD_DIR=.device-build/<build>
# and the copy stays under a transfer limit (object files stay behind).
# usage: tests/gpu/pack_build.sh [build-dir]   (default build-h200)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-h200}
dest=.device-build/$build
rm -rf "$dest"
mkdir -p "$dest"
(cd "$build" && find app tests -maxdepth 2 -type f -perm -u+x ! -name '*.so' ! -name '*.p' -print0 |
  xargs -0 -I{} cp --parents {} "../$dest/")
# The peer script's tree stamp (which commit the tree is) and plugin libraries.
# meson puts them in build/kernels/plugin/example/ and build/tests/kernels/plugins/.
(cd "$build" && find peers kernels tests -maxdepth 4 \( -name tree_stamp.json -o -name '*.so' \) -print0 2>/dev/null |
  xargs -0 -r -I{} cp --parents {} "../$dest/")
du -sh "$dest"
