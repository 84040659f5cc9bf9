/* Plugin ABI version 2 as released (kernels/plugin/cuflash_roofline_plugin.h
 * at commit bb0daca), kept unchanged so that the tests build a version-2
 * plugin and check that the tool still loads it, for square shapes only
 * (tests/kernels/plugins/meson.build). Not for new plugins. */
/* cuflash-roofline plugin ABI (docs/plugins.md).
 *
 * A plugin is a shared library that exports one C function,
 *
 *     const cfr_plugin* cfr_plugin_kernels(void);
 *
 * returning a description of each attention kernel it brings. `cuflash-roofline
 * sweep --plugin PATH` loads it, checks every description, and measures its
 * kernels like the built-in ones: checked against the fp32 reference, timed
 * with the cold timer, modelled with the declared tiles, and recorded with the
 * plugin file's SHA-256 and the kernel's version string.
 *
 * C only, no CUDA header: a plugin may be built by any compiler. Every pointer
 * the plugin hands out (the cfr_plugin, its descriptions, their strings and
 * tiles) must stay valid while the library is loaded: use static storage.
 *
 * Tensor layout: [batch, heads, seq_len, head_dim], contiguous, in the row's
 * dtype; LSE is fp32 [batch, heads, seq_len], the natural-log logsumexp of the
 * scaled scores of each query row.
 *
 * A change to any type below raises CFR_PLUGIN_ABI_VERSION. Version 2 appended
 * `hbm_bytes` to cfr_kernel_description and nothing else, so a version-1
 * description is a version-2 one without its last field: the tool reads
 * plugins of version 1 (as if hbm_bytes were NULL) and 2, and refuses any
 * other. */
#ifndef CUFLASH_ROOFLINE_PLUGIN_V2_H
#define CUFLASH_ROOFLINE_PLUGIN_V2_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CFR_PLUGIN_ABI_VERSION 2
#define CFR_PLUGIN_ENTRY_POINT "cfr_plugin_kernels"

/* Element types: a kernel's `dtypes` is a bit set of these, a shape's `dtype` one of them. */
#define CFR_DTYPE_FP16 1u
#define CFR_DTYPE_BF16 2u
#define CFR_DTYPE_FP32 4u

/* Directions. 0 is no direction, so a description left zeroed is refused. */
#define CFR_FORWARD 1
#define CFR_BACKWARD 2

/* Compute units: where the kernel's FLOPs run, which peak its roof is.
 * SIMT: fp32 FMAs on CUDA cores. TENSOR: tensor cores of the I/O dtype (fp16,
 * bf16; an fp32 row is judged against the fp32 SIMT peak). */
#define CFR_COMPUTE_SIMT 1
#define CFR_COMPUTE_TENSOR 2

/* What a launch returns. Anything else than CFR_OK fails the row, with the
 * message the launch wrote (the sweep goes on). */
#define CFR_OK 0
#define CFR_ERROR 1

/* One configuration. The scale is resolved: 1/sqrt(head_dim) unless the run
 * asks for another, never 0. */
typedef struct cfr_shape {
  int batch;
  int heads;
  int seq_len;
  int head_dim;
  int causal; /* 1: query i sees keys 0..i only */
  unsigned dtype; /* one CFR_DTYPE_* */
  float softmax_scale;
} cfr_shape;

/* Device pointers of a forward launch. */
typedef struct cfr_forward_args {
  const void* q;
  const void* k;
  const void* v;
  void* o;
  float* lse;
  void* workspace; /* workspace_bytes(shape) bytes, or NULL when that is 0 */
  size_t workspace_bytes;
  void* stream; /* a cudaStream_t: launch on it, do not synchronize */
} cfr_forward_args;

/* Device pointers of a backward launch: O and LSE come from the forward
 * partner on the same inputs. */
typedef struct cfr_backward_args {
  const void* q;
  const void* k;
  const void* v;
  const void* o;
  const void* d_o;
  const float* lse;
  void* d_q;
  void* d_k;
  void* d_v;
  void* workspace;
  size_t workspace_bytes;
  void* stream;
} cfr_backward_args;

/* Launch on args->stream and return CFR_OK, or CFR_ERROR with one line in
 * `message` (at most message_capacity bytes, NUL included) saying why: an
 * unsupported shape, a failed cudaLaunchKernel. */
typedef int (*cfr_forward_launch_fn)(const cfr_shape* shape, const cfr_forward_args* args,
                                     char* message, size_t message_capacity);
typedef int (*cfr_backward_launch_fn)(const cfr_shape* shape, const cfr_backward_args* args,
                                      char* message, size_t message_capacity);

/* The traffic model of a kernel that counts its own HBM bytes (version 2):
 * its description gives hbm_bytes. */
#define CFR_TRAFFIC_PLUGIN "plugin"

/* The bytes the kernel moves between HBM and the chip for this shape, read
 * plus written, with a cold L2: write them into *bytes and return CFR_OK, or
 * return CFR_ERROR with one line in `message` saying why there is no count
 * for this shape. A count that is not finite and positive, or an error, fails
 * that row (the run goes on). Called on the host, with no device work. */
typedef int (*cfr_hbm_bytes_fn)(const cfr_shape* shape, double* bytes, char* message,
                                size_t message_capacity);

/* The tile a kernel runs with at one head dim: br query rows per CTA, bc
 * key/value rows per inner step. The traffic models read it. */
typedef struct cfr_tile {
  int head_dim;
  int br;
  int bc;
} cfr_tile;

typedef struct cfr_kernel_description {
  /* [A-Za-z0-9_.-]+, unique among the built-in kernels and every loaded plugin. */
  const char* name;
  /* The kernel's own version, recorded in the report: "1.2.0", a commit. */
  const char* version;
  int direction;   /* CFR_FORWARD or CFR_BACKWARD */
  unsigned dtypes; /* CFR_DTYPE_* bits */
  /* One per head dim it supports, head dims ascending. */
  const cfr_tile* tiles;
  int tile_count;
  int compute_unit; /* CFR_COMPUTE_* */
  /* Which of the tool's HBM byte models describes it (docs/model.md):
   * "compulsory", "kv_reload" or "materialized" for a forward kernel,
   * "fa1_backward" for a backward one; or CFR_TRAFFIC_PLUGIN ("plugin") for
   * either, with its own count in hbm_bytes. */
  const char* traffic_model;
  /* The oldest GPU its code runs on: rows on older GPUs are skipped. */
  int min_cc_major;
  int min_cc_minor;
  /* Device bytes it needs besides its tensors; NULL: none. */
  size_t (*workspace_bytes)(const cfr_shape* shape);
  /* Exactly the one of its direction. */
  cfr_forward_launch_fn forward;
  cfr_backward_launch_fn backward;
  /* A backward kernel: the forward kernel (built in or of a plugin loaded
   * before it) whose O and LSE it is given. NULL for a forward kernel. */
  const char* forward_partner;
  const char* summary; /* one line for listings; may be NULL */
  /* Version 2. Its own HBM byte count per shape, with traffic_model
   * CFR_TRAFFIC_PLUGIN; NULL with any other traffic model. */
  cfr_hbm_bytes_fn hbm_bytes;
} cfr_kernel_description;

typedef struct cfr_plugin {
  int abi_version; /* CFR_PLUGIN_ABI_VERSION, first so that any version can read it */
  const cfr_kernel_description* kernels;
  int kernel_count;
} cfr_plugin;

typedef const cfr_plugin* (*cfr_plugin_kernels_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* CUFLASH_ROOFLINE_PLUGIN_V2_H */
