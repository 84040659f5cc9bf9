/* A plugin for the CPU tests (tests/kernels/test_plugin_loader.cpp): two
 * kernels that launch nothing, in plain C with no CUDA, so it loads on any
 * machine. Built once as it is (a valid plugin), once against ABI version 1
 * (-DCFR_TEST_ABI_V1, a plugin the tool still loads) and once per
 * -DCFR_DEFECT_* below, each a plugin the tool must refuse with one line.
 * -DCFR_TEST_PRINTS: a valid plugin that prints to stdout while it is loaded
 * and asked for its kernels, which must not reach the tool's stdout.
 * -DCFR_TEST_KERNEL_COUNT=N: a kernel_count of N over the array of 2. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifdef CFR_TEST_ABI_V1 /* the same plugin built against ABI version 1 */
#include "cuflash_roofline_plugin_v1.h"
#else
#include "kernels/plugin/cuflash_roofline_plugin.h"
#endif

static int refuse_forward(const cfr_shape* shape, const cfr_forward_args* args, char* message,
                          size_t capacity) {
  (void)args;
  snprintf(message, capacity, "tiny_fwd launches nothing (asked for N=%d)", shape->seq_len);
  return CFR_ERROR;
}

static int refuse_backward(const cfr_shape* shape, const cfr_backward_args* args, char* message,
                           size_t capacity) {
  (void)shape;
  (void)args;
  (void)message;
  (void)capacity;
  return CFR_ERROR; /* and no message: the tool says so */
}

static size_t workspace_bytes(const cfr_shape* shape) {
  return (size_t)shape->seq_len * 4u;
}

#if defined(CFR_DEFECT_BAD_HEAD_DIM)
static const cfr_tile tiles[] = {{128, 64, 64}, {64, 64, 32}}; /* not ascending */
#elif defined(CFR_DEFECT_BAD_TILE)
static const cfr_tile tiles[] = {{64, 64, 0}, {128, 64, 32}};
#else
static const cfr_tile tiles[] = {{64, 64, 64}, {128, 64, 32}};
#endif

#if defined(CFR_DEFECT_NULL_NAME)
#define TINY_FORWARD_NAME NULL
#elif defined(CFR_DEFECT_WILD_NAME)
#define TINY_FORWARD_NAME ((const char*)16) /* no memory there */
#elif defined(CFR_DEFECT_EMPTY_NAME)
#define TINY_FORWARD_NAME ""
#elif defined(CFR_DEFECT_BUILTIN_NAME)
#define TINY_FORWARD_NAME "fa2_mma"
#else
#define TINY_FORWARD_NAME "tiny_fwd"
#endif

#if defined(CFR_DEFECT_UNKNOWN_DTYPE)
#define TINY_DTYPES (CFR_DTYPE_FP16 | 8u)
#else
#define TINY_DTYPES (CFR_DTYPE_FP16 | CFR_DTYPE_FP32)
#endif

#if defined(CFR_DEFECT_UNKNOWN_MODEL)
#define TINY_MODEL "l2_magic"
#else
#define TINY_MODEL "kv_reload"
#endif

static const cfr_kernel_description kernels[] = {
    {
        .name = TINY_FORWARD_NAME,
        .version = "0.1-test",
        .direction = CFR_FORWARD,
        .dtypes = TINY_DTYPES,
        .tiles = tiles,
#if defined(CFR_DEFECT_TILE_COUNT)
        .tile_count = 100000000, /* far past the array of 2 */
#else
        .tile_count = 2,
#endif
        .compute_unit = CFR_COMPUTE_SIMT,
        .traffic_model = TINY_MODEL,
        .min_cc_major = 8,
        .min_cc_minor = 0,
        .workspace_bytes = workspace_bytes,
        .forward = refuse_forward,
        .backward = NULL,
        .forward_partner = NULL,
        .summary = "a test kernel that launches nothing",
    },
    {
        .name = "tiny_bwd",
        .version = "0.2-test",
        .direction = CFR_BACKWARD,
        .dtypes = CFR_DTYPE_FP16,
        .tiles = tiles,
        .tile_count = 1,
        .compute_unit = CFR_COMPUTE_TENSOR,
        .traffic_model = "fa1_backward",
        .min_cc_major = 8,
        .min_cc_minor = 0,
        .workspace_bytes = NULL,
        .forward = NULL,
        .backward = refuse_backward,
        .forward_partner = "tiny_fwd",
        .summary = NULL,
    },
};

#ifndef CFR_TEST_KERNEL_COUNT
#define CFR_TEST_KERNEL_COUNT 2
#endif

#if defined(CFR_DEFECT_ABI_VERSION)
static const cfr_plugin plugin = {CFR_PLUGIN_ABI_VERSION + 98, kernels, CFR_TEST_KERNEL_COUNT};
#else
static const cfr_plugin plugin = {CFR_PLUGIN_ABI_VERSION, kernels, CFR_TEST_KERNEL_COUNT};
#endif

#if defined(CFR_TEST_PRINTS)
/* Through C stdio's buffer (flushed or not by the time the tool writes) and
 * straight to file descriptor 1. */
__attribute__((constructor)) static void say_hello(void) {
  printf("test plugin constructor: buffered\n");
  static const char direct[] = "test plugin constructor: write(1)\n";
  (void)!write(1, direct, strlen(direct));
}
#define ASKED() printf("test plugin: asked for its kernels\n")
#else
#define ASKED() ((void)0)
#endif

#if defined(CFR_DEFECT_NO_ENTRY_POINT)
const cfr_plugin* some_other_function(void) {
  return &plugin;
}
#else
const cfr_plugin* cfr_plugin_kernels(void) {
  ASKED();
  return &plugin;
}
#endif
