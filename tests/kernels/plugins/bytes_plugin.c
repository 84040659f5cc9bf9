/* A plugin whose kernels count their own HBM bytes (traffic model "plugin"),
 * for the CPU tests: the loader's, `model --plugin` and `audit --plugin`.
 * Plain C, launches nothing. Built as it is (ABI version 3: tiny_bytes takes
 * every served shape), against ABI version 2 (-DCFR_TEST_ABI_V2: square
 * shapes only), and once per -DCFR_DEFECT_* below, each a plugin the tool
 * must refuse; with -DCFR_TEST_COUNT_TWICE it counts twice the bytes (audit's
 * test of a count that is not the plugin's).
 *
 * tiny_bytes says it reads Q and writes O once and reads K and V twice, and
 * reads a paged cache's page table once: (2 · H · N + 4 · Hkv · Nk) · B · d
 * · element bytes, plus 4 · B · ceil(Nk / page_size) when paged; 6 · B · H ·
 * N · d · element bytes for a square shape (all that version 2 knows).
 * tiny_bytes_bwd says 10 · B · H · N · d · element bytes. For some sequence
 * lengths the count is wrong on purpose, so that the rows of those shapes
 * fail and the others do not (bad_count below). */
#include <math.h>
#include <stdio.h>

#ifdef CFR_TEST_ABI_V2
#include "cuflash_roofline_plugin_v2.h"
#else
#include "kernels/plugin/cuflash_roofline_plugin.h"
#endif

/* Says which cache it was handed (version 3): the GPU test's check that the
 * bench's page table reaches a plugin. */
static int launch_nothing(const cfr_shape* shape, const cfr_forward_args* args, char* message,
                          size_t capacity) {
#if CFR_PLUGIN_ABI_VERSION >= 3
  snprintf(message, capacity, "tiny_bytes launches nothing (page_size %d, page_table %s, %d pages)",
           shape->page_size, args->page_table != NULL ? "given" : "null", args->pages_per_sequence);
#else
  (void)shape;
  (void)args;
  snprintf(message, capacity, "tiny_bytes launches nothing");
#endif
  return CFR_ERROR;
}

static int launch_nothing_backward(const cfr_shape* shape, const cfr_backward_args* args,
                                   char* message, size_t capacity) {
  (void)shape;
  (void)args;
  snprintf(message, capacity, "tiny_bytes_bwd launches nothing");
  return CFR_ERROR;
}

static double element_bytes(unsigned dtype) {
  return dtype == CFR_DTYPE_FP32 ? 4.0 : 2.0;
}

/* N = 100: NaN, 200: negative, 300: zero, 600: infinite, 400: an error with
 * a message, 500: an error without one. Returns 1 when it answered. */
static int bad_count(const cfr_shape* shape, double* bytes, int* status, char* message,
                     size_t capacity) {
  switch (shape->seq_len) {
    case 100: *bytes = NAN; break;
    case 200: *bytes = -4096.0; break;
    case 300: *bytes = 0.0; break;
    case 600: *bytes = INFINITY; break;
    case 400:
      snprintf(message, capacity, "tiny_bytes counts no N=%d", shape->seq_len);
      *status = CFR_ERROR;
      return 1;
    case 500: *status = CFR_ERROR; return 1;
    default: return 0;
  }
  *status = CFR_OK;
  return 1;
}

/* The elements of Q ([seq_len, head_dim] per query head) and of K ([kv_len,
 * head_dim] per K/V head) over the batch. A version-2 shape has no kv_len or
 * kv_heads: its K is as large as its Q. */
static double query_rows(const cfr_shape* shape) {
  return (double)shape->batch * shape->heads * shape->seq_len * shape->head_dim;
}

#if CFR_PLUGIN_ABI_VERSION >= 3
static double key_rows(const cfr_shape* shape) {
  return (double)shape->batch * shape->kv_heads * shape->kv_len * shape->head_dim;
}

static double table_bytes(const cfr_shape* shape) {
  if (shape->page_size <= 0) return 0.0;
  return 4.0 * shape->batch * ((shape->kv_len + shape->page_size - 1) / shape->page_size);
}
#else
static double key_rows(const cfr_shape* shape) {
  return query_rows(shape);
}

static double table_bytes(const cfr_shape* shape) {
  (void)shape;
  return 0.0;
}
#endif

/* Q and O (and dQ, dO...) `q_passes` times, K and V `kv_passes` times. */
static int count(const cfr_shape* shape, double q_passes, double kv_passes, double* bytes,
                 char* message, size_t capacity) {
  int status = CFR_OK;
  if (bad_count(shape, bytes, &status, message, capacity)) return status;
  *bytes =
      (q_passes * query_rows(shape) + kv_passes * key_rows(shape)) * element_bytes(shape->dtype) +
      table_bytes(shape);
  return CFR_OK;
}

#ifdef CFR_TEST_COUNT_TWICE
#define COUNT_FACTOR 2.0
#else
#define COUNT_FACTOR 1.0
#endif

#ifndef CFR_DEFECT_NO_CALLBACK
static int forward_bytes(const cfr_shape* shape, double* bytes, char* message, size_t capacity) {
  return count(shape, COUNT_FACTOR * 2.0, COUNT_FACTOR * 4.0, bytes, message, capacity);
}
#endif

static int backward_bytes(const cfr_shape* shape, double* bytes, char* message, size_t capacity) {
  return count(shape, COUNT_FACTOR * 10.0, 0.0, bytes, message, capacity);
}

static const cfr_tile tiles[] = {{64, 64, 64}, {128, 64, 32}};

#if defined(CFR_DEFECT_NO_CALLBACK)
#define FORWARD_MODEL CFR_TRAFFIC_PLUGIN
#define FORWARD_COUNT NULL
#elif defined(CFR_DEFECT_CALLBACK_OTHER_MODEL)
#define FORWARD_MODEL "kv_reload"
#define FORWARD_COUNT forward_bytes
#else
#define FORWARD_MODEL CFR_TRAFFIC_PLUGIN
#define FORWARD_COUNT forward_bytes
#endif

static const cfr_kernel_description kernels[] = {
    {
        .name = "tiny_bytes",
        .version = "0.3-test",
        .direction = CFR_FORWARD,
        .dtypes = CFR_DTYPE_FP16 | CFR_DTYPE_FP32,
        .tiles = tiles,
        .tile_count = 2,
        .compute_unit = CFR_COMPUTE_SIMT,
        .traffic_model = FORWARD_MODEL,
        .min_cc_major = 8,
        .min_cc_minor = 0,
        .workspace_bytes = NULL,
        .forward = launch_nothing,
        .backward = NULL,
        .forward_partner = NULL,
        .summary = "a test kernel that counts its own bytes and launches nothing",
        .hbm_bytes = FORWARD_COUNT,
#if CFR_PLUGIN_ABI_VERSION >= 3
        .shapes = CFR_SHAPE_KV_LEN | CFR_SHAPE_GQA | CFR_SHAPE_PAGED,
        .max_q_len = 0,
#endif
    },
    {
        .name = "tiny_bytes_bwd",
        .version = "0.3-test",
        .direction = CFR_BACKWARD,
        .dtypes = CFR_DTYPE_FP16,
        .tiles = tiles,
        .tile_count = 1,
        .compute_unit = CFR_COMPUTE_TENSOR,
        .traffic_model = CFR_TRAFFIC_PLUGIN,
        .min_cc_major = 8,
        .min_cc_minor = 0,
        .workspace_bytes = NULL,
        .forward = NULL,
        .backward = launch_nothing_backward,
        .forward_partner = "fa1_scalar",
        .summary = NULL,
        .hbm_bytes = backward_bytes,
    },
};

static const cfr_plugin plugin = {CFR_PLUGIN_ABI_VERSION, kernels, 2};

const cfr_plugin* cfr_plugin_kernels(void) {
  return &plugin;
}
