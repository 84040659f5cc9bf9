/* A plugin whose kernels count their own HBM bytes (traffic model "plugin",
 * ABI version 2), for the CPU tests: the loader's, `model --plugin` and
 * `audit --plugin`. Plain C, launches nothing. Built as it is and once per
 * -DCFR_DEFECT_* below, each a plugin the tool must refuse; with
 * -DCFR_TEST_COUNT_TWICE it counts twice the bytes (audit's test of a count
 * that is not the plugin's).
 *
 * tiny_bytes says it reads Q and writes O once and reads K and V twice:
 * 6 · B · H · N · d · element bytes. tiny_bytes_bwd says 10 of those.
 * For some sequence lengths the count is wrong on purpose, so that the rows
 * of those shapes fail and the others do not (bad_count below). */
#include <math.h>
#include <stdio.h>

#include "kernels/plugin/cuflash_roofline_plugin.h"

static int launch_nothing(const cfr_shape* shape, const cfr_forward_args* args, char* message,
                          size_t capacity) {
  (void)shape;
  (void)args;
  snprintf(message, capacity, "tiny_bytes launches nothing");
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

static int count(const cfr_shape* shape, double passes, double* bytes, char* message,
                 size_t capacity) {
  int status = CFR_OK;
  if (bad_count(shape, bytes, &status, message, capacity)) return status;
  *bytes = passes * shape->batch * shape->heads * (double)shape->seq_len * shape->head_dim *
           element_bytes(shape->dtype);
  return CFR_OK;
}

#ifdef CFR_TEST_COUNT_TWICE
#define COUNT_FACTOR 2.0
#else
#define COUNT_FACTOR 1.0
#endif

#ifndef CFR_DEFECT_NO_CALLBACK
static int forward_bytes(const cfr_shape* shape, double* bytes, char* message, size_t capacity) {
  return count(shape, COUNT_FACTOR * 6.0, bytes, message, capacity);
}
#endif

static int backward_bytes(const cfr_shape* shape, double* bytes, char* message, size_t capacity) {
  return count(shape, COUNT_FACTOR * 10.0, bytes, message, capacity);
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
