/* A plugin for the CPU tests (tests/kernels/test_plugin_loader.cpp): two
 * kernels that launch nothing, in plain C with no CUDA, so it loads on any
 * machine. Built once as it is (a valid plugin of ABI version 3, whose
 * tiny_fwd takes K/V lengths and GQA), once against ABI versions 1 and 2
 * (-DCFR_TEST_ABI_V1, -DCFR_TEST_ABI_V2: plugins the tool still loads, for
 * square shapes only) and once per -DCFR_DEFECT_* below, each a plugin the
 * tool must refuse with one line. -DCFR_TEST_ABI_VERSION=N: a plugin that
 * says it is of version N.
 * -DCFR_TEST_PRINTS: a valid plugin that prints to stdout while it is loaded
 * and asked for its kernels, which must not reach the tool's stdout.
 * -DCFR_TEST_KERNEL_COUNT=N: a kernel_count of N over the array of 2. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#if defined(CFR_TEST_ABI_V1) /* the same plugin built against ABI version 1 */
#include "cuflash_roofline_plugin_v1.h"
#elif defined(CFR_TEST_ABI_V2) /* ... and version 2 */
#include "cuflash_roofline_plugin_v2.h"
#else
#include "kernels/plugin/cuflash_roofline_plugin.h"
#endif

/* Says what it was asked: the shape and, from version 3, the K/V fields and
 * the page table, so the tests see what reaches a plugin. */
static int refuse_forward(const cfr_shape* shape, const cfr_forward_args* args, char* message,
                          size_t capacity) {
#if CFR_PLUGIN_ABI_VERSION >= 3
  snprintf(message, capacity,
           "tiny_fwd launches nothing (asked for N=%d; kv_len %d, kv_heads %d, page_size %d, "
           "page_table %s, pages_per_sequence %d)",
           shape->seq_len, shape->kv_len, shape->kv_heads, shape->page_size,
           args->page_table != NULL ? "given" : "null", args->pages_per_sequence);
#else
  (void)args;
  snprintf(message, capacity, "tiny_fwd launches nothing (asked for N=%d)", shape->seq_len);
#endif
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

#if defined(CFR_DEFECT_UNKNOWN_SHAPES)
#define TINY_SHAPES (CFR_SHAPE_KV_LEN | 8u)
#else
#define TINY_SHAPES (CFR_SHAPE_KV_LEN | CFR_SHAPE_GQA)
#endif

#if defined(CFR_DEFECT_BAD_MAX_Q_LEN)
#define TINY_MAX_Q_LEN (-1)
#else
#define TINY_MAX_Q_LEN 8192
#endif

#if defined(CFR_DEFECT_BACKWARD_SHAPES)
#define TINY_BACKWARD_SHAPES CFR_SHAPE_GQA
#else
#define TINY_BACKWARD_SHAPES 0u
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
#if CFR_PLUGIN_ABI_VERSION >= 3
        .hbm_bytes = NULL,
        .shapes = TINY_SHAPES,
        .max_q_len = TINY_MAX_Q_LEN,
#endif
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
#if CFR_PLUGIN_ABI_VERSION >= 3
        .hbm_bytes = NULL,
        .shapes = TINY_BACKWARD_SHAPES,
        .max_q_len = 0,
#endif
    },
};

#ifndef CFR_TEST_KERNEL_COUNT
#define CFR_TEST_KERNEL_COUNT 2
#endif

#ifndef CFR_TEST_ABI_VERSION
#define CFR_TEST_ABI_VERSION CFR_PLUGIN_ABI_VERSION
#endif

static const cfr_plugin plugin = {CFR_TEST_ABI_VERSION, kernels, CFR_TEST_KERNEL_COUNT};

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
