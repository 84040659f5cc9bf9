#pragma once

// The resident-memory bound of a command that touches no GPU, in KiB
// (ru_maxrss's unit). docs/perf-notes.md, "What a command costs before it does
// anything", has the measurements: 6.1 MiB for `--version` up to 25.3 MiB for
// `model` on its default axes; opening cuBLAS alone peaks at 152 MiB (217 MiB
// once its teardown at exit has run). 64 MiB is 2.5 times the largest command
// and under half of cuBLAS: a command that opens cuBLAS again cannot pass.
// tests/app/test_startup_footprint.cpp holds commands to it;
// tests/measure/test_cublas_library.cpp checks that cuBLAS does not fit.
inline constexpr long startup_rss_bound_kib = 64 * 1024;
