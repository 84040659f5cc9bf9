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
 * Tensor layout, in the row's dtype: Q and O [batch, heads, seq_len, head_dim]
 * contiguous (seq_len is the query length); K and V [batch, kv_heads, kv_len,
 * head_dim] contiguous, or, in a paged cache, pages (below). LSE is fp32
 * [batch, heads, seq_len], the natural-log logsumexp of the scaled scores of
 * each query row. Query head h reads K/V head h / (heads / kv_heads).
 *
 * A change to any type below raises CFR_PLUGIN_ABI_VERSION, and a version
 * only appends fields, so a description of an older version is one of this
 * version cut after its last field:
 *   1  the first.
 *   2  appended `hbm_bytes` to cfr_kernel_description.
 *   3  appended `kv_len`, `kv_heads` and `page_size` to cfr_shape,
 *      `page_table` and `pages_per_sequence` to cfr_forward_args, and `shapes`
 *      and `max_q_len` to cfr_kernel_description: the shapes of serving
 *      (decode, a KV cache, GQA/MQA, a paged cache).
 * The tool reads plugins of versions 1 to 3 and refuses any other. It reads
 * a description by the size of the plugin's version and takes the fields
 * that version lacks as 0 or NULL: a version-1 kernel has no hbm_bytes, and a
 * kernel of version 1 or 2 takes square shapes only (as many K/V tokens and
 * heads as Q, contiguous): a row of any other shape is skipped with a reason
 * naming the plugin's version. The tool always fills the whole shape and
 * argument structs of this version; an older plugin reads the part it knows. */
#ifndef CUFLASH_ROOFLINE_PLUGIN_H
#define CUFLASH_ROOFLINE_PLUGIN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CFR_PLUGIN_ABI_VERSION 3
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
 * asks for another, never 0; kv_len and kv_heads are resolved too, never 0. */
typedef struct cfr_shape {
  int batch;
  int heads;
  int seq_len; /* query tokens */
  int head_dim;
  /* 1: query i sees keys 0 .. i + kv_len - seq_len (the bottom-right aligned
   * mask; keys 0 .. i when kv_len == seq_len). A causal row never has
   * seq_len > kv_len. */
  int causal;
  unsigned dtype; /* one CFR_DTYPE_* */
  float softmax_scale;
  /* Version 3. Key (and value) tokens per sequence: seq_len for square
   * self-attention, more when the queries continue a KV cache (decode). */
  int kv_len;
  /* Version 3. K/V heads: heads, or a divisor of it (GQA; 1 is MQA). */
  int kv_heads;
  /* Version 3. 0: K and V contiguous. Otherwise the tokens per page of a paged
   * cache (cfr_forward_args.page_table), a power of two. */
  int page_size;
} cfr_shape;

/* Device pointers of a forward launch. */
typedef struct cfr_forward_args {
  const void* q;
  const void* k; /* a paged cache: the K page pool */
  const void* v; /* a paged cache: the V page pool */
  void* o;
  float* lse;
  void* workspace; /* workspace_bytes(shape) bytes, or NULL when that is 0 */
  size_t workspace_bytes;
  void* stream; /* a cudaStream_t: launch on it, do not synchronize */
  /* Version 3, a paged cache (shape->page_size > 0): int32 [batch,
   * pages_per_sequence], row b the pool indices of sequence b's pages in
   * token order (in any order in the pool). Token t of sequence b, K/V head g,
   * is row t % page_size of page P = page_table[b * pages_per_sequence + t /
   * page_size], at element ((P * kv_heads + g) * page_size + t % page_size) *
   * head_dim of k and v: each pool is [pages, kv_heads, page_size, head_dim]
   * (HND). pages_per_sequence * page_size >= kv_len. NULL and 0 for a
   * contiguous cache. */
  const int* page_table;
  int pages_per_sequence;
} cfr_forward_args;

/* Device pointers of a backward launch: O and LSE come from the forward
 * partner on the same inputs. Backward rows are square (no shape bits). */
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

/* The served shapes a kernel takes (version 3): its description's `shapes` is
 * a bit set of these. A row that needs one the kernel lacks is skipped with
 * the reason (the sweep goes on). 0: square self-attention only. */
#define CFR_SHAPE_KV_LEN 1u /* kv_len != seq_len (decode, a KV cache) */
#define CFR_SHAPE_GQA 2u    /* kv_heads < heads (GQA, MQA) */
#define CFR_SHAPE_PAGED 4u  /* page_size > 0, K/V through page_table */

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
   * "fa1_backward" or "fa2_backward" for a backward one; or
   * CFR_TRAFFIC_PLUGIN ("plugin") for either, with its own count in
   * hbm_bytes. */
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
  /* Version 3. CFR_SHAPE_* bits: the shapes beyond square self-attention it
   * takes (0 for a backward kernel). */
  unsigned shapes;
  /* Version 3. The most query tokens (seq_len) it is built for, e.g. a decode
   * kernel's 16; 0: any. */
  int max_q_len;
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

#endif /* CUFLASH_ROOFLINE_PLUGIN_H */
