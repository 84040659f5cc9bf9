#include "kernels/plugin/plugin_loader.hpp"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "kernels/plugin/cuflash_roofline_plugin.h"
#include "kernels/plugin/readable_memory.hpp"
#include "roofline/core/sha256.hpp"
#include "roofline/model/own_byte_count.hpp"

namespace cfr::kernels {

namespace {

[[noreturn]] void refuse(const std::string& path, std::string_view problem) {
  throw std::invalid_argument(fmt::format("plugin {}: {}", path, problem));
}

// Why the system refused to open or read the file, in its words: "No such
// file or directory" and "Too many levels of symbolic links" are different
// mistakes.
[[noreturn]] void refuse_unreadable(const std::string& path) {
  refuse(path, fmt::format("cannot be read ({})", std::strerror(errno)));
}

// The file's bytes, for its SHA-256. Only a regular file: /dev/zero would be
// read without end and a FIFO with no writer would never open.
std::string read_bytes(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) refuse_unreadable(path);
  if (S_ISDIR(info.st_mode)) refuse(path, "is a folder, not a shared library");
  if (!S_ISREG(info.st_mode)) {
    refuse(path, "not a regular file (a device, FIFO or socket is not a shared library)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) refuse_unreadable(path);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

unsigned dtype_bit(DType dtype) {
  switch (dtype) {
    case DType::fp16: return CFR_DTYPE_FP16;
    case DType::bf16: return CFR_DTYPE_BF16;
    case DType::fp32: return CFR_DTYPE_FP32;
  }
  return 0;
}

// The whole shape of this ABI version, kv_len and kv_heads resolved: a
// plugin of an older version reads the part it knows.
cfr_shape c_shape(const AttentionShape& shape) {
  const float scale = shape.softmax_scale != 0.f
                          ? shape.softmax_scale
                          : 1.f / std::sqrt(static_cast<float>(shape.head_dim));
  return {shape.batch,    shape.heads,          shape.seq_len,
          shape.head_dim, shape.causal ? 1 : 0, dtype_bit(shape.dtype),
          scale,          shape.keys(),         shape.key_heads(),
          shape.page_size};
}

constexpr std::size_t message_capacity = 512;

// Calls a plugin's launch function. A launch that returns an error has its
// message put where the caller asked, and gives a CUDA code that does not
// mark the device lost: the plugin reported what went wrong, and a fault of a
// kernel it did launch shows at the next synchronization as its own error.
template <typename LaunchFn, typename Args>
cudaError_t call_plugin(LaunchFn launch, const AttentionShape& shape, const Args& args,
                        const LaunchContext& context) {
  const cfr_shape c = c_shape(shape);
  char message[message_capacity] = {};
  if (launch(&c, &args, message, message_capacity) == CFR_OK) return cudaSuccess;
  message[message_capacity - 1] = '\0';
  if (context.failure_message != nullptr) {
    *context.failure_message =
        message[0] != '\0' ? message : "the plugin's launch returned an error and no message";
  }
  return cudaErrorUnknown;
}

// A plugin's hbm_bytes callback as the models ask for it: per problem, the
// count or the plugin's one line.
class PluginByteCount final : public OwnByteCount {
 public:
  explicit PluginByteCount(cfr_hbm_bytes_fn count) : count_(count) {}

  ByteCount hbm_bytes(const AttentionProblem& problem) const override {
    constexpr std::int64_t widest = std::numeric_limits<int>::max();
    for (std::int64_t extent : {problem.batch, problem.heads, problem.seq_len, problem.head_dim,
                                problem.keys(), problem.key_heads(), problem.page_size}) {
      if (extent > widest) return std::string("a dimension beyond the plugin ABI's int shape");
    }
    const cfr_shape c = c_shape(shape_of(problem));
    double bytes = std::numeric_limits<double>::quiet_NaN();
    char message[message_capacity] = {};
    if (count_(&c, &bytes, message, message_capacity) == CFR_OK) return bytes;
    message[message_capacity - 1] = '\0';
    return std::string(message[0] != '\0' ? message : "hbm_bytes returned an error and no message");
  }

 private:
  cfr_hbm_bytes_fn count_;
};

// The byte counts of every plugin loaded, for the life of the process: the
// registry's descriptions point at them, as its launchers call into the
// library, which is never unloaded either.
std::deque<PluginByteCount>& byte_counts() {
  static std::deque<PluginByteCount> counts;
  return counts;
}

KernelLauncher launcher_of(const cfr_kernel_description& kernel) {
  const auto workspace = [fn = kernel.workspace_bytes](const AttentionShape& shape) {
    if (fn == nullptr) return std::size_t{0};
    const cfr_shape c = c_shape(shape);
    return fn(&c);
  };
  if (kernel.direction == CFR_FORWARD) {
    return ForwardKernel{
        workspace, [fn = kernel.forward](const AttentionShape& shape, const ForwardBuffers& b,
                                         const LaunchContext& context) {
          const cfr_forward_args args{b.q,
                                      b.k,
                                      b.v,
                                      b.o,
                                      b.lse,
                                      context.workspace,
                                      context.workspace_bytes,
                                      context.stream,
                                      b.page_table,
                                      b.page_table != nullptr ? b.pages_per_sequence : 0};
          return call_plugin(fn, shape, args, context);
        }};
  }
  return BackwardKernel{
      workspace, [fn = kernel.backward](const AttentionShape& shape, const BackwardBuffers& b,
                                        const LaunchContext& context) {
        const cfr_backward_args args{b.q,
                                     b.k,
                                     b.v,
                                     b.o,
                                     b.d_o,
                                     b.lse,
                                     b.d_q,
                                     b.d_k,
                                     b.d_v,
                                     context.workspace,
                                     context.workspace_bytes,
                                     context.stream};
        return call_plugin(fn, shape, args, context);
      }};
}

// A plugin's description in the registry's terms, with the storage its views
// point into (the registry copies it on add).
struct Translated {
  KernelDescription description;
  std::vector<int> head_dims;
  std::vector<ConfigRule> configs;
  std::string version;
};

// A string of a description: empty for null, refused when it does not start
// and end in readable memory (a wild pointer, or a description read past
// the plugin's array).
std::string_view text_of(const char* text, const ReadableMemory& memory, std::string_view where,
                         std::string_view field) {
  if (text == nullptr) return {};
  const std::optional<std::string_view> view = memory.c_string(text);
  if (!view) {
    throw std::invalid_argument(
        fmt::format("{}: its {} points outside the process's readable memory", where, field));
  }
  return *view;
}

DTypeSet dtypes_of(unsigned bits, const std::string& where) {
  constexpr unsigned known = CFR_DTYPE_FP16 | CFR_DTYPE_BF16 | CFR_DTYPE_FP32;
  if ((bits & ~known) != 0) {
    throw std::invalid_argument(fmt::format(
        "{}: unknown dtype bits {:#x} (CFR_DTYPE_FP16, _BF16, _FP32)", where, bits & ~known));
  }
  return {(bits & CFR_DTYPE_FP16) != 0, (bits & CFR_DTYPE_BF16) != 0, (bits & CFR_DTYPE_FP32) != 0};
}

// Head dims and tiles: each positive, head dims ascending (what
// description_error checks again, with these words for a plugin author).
void read_tiles(const cfr_kernel_description& kernel, const ReadableMemory& memory,
                const std::string& where, Translated& out) {
  if (kernel.tiles == nullptr || kernel.tile_count <= 0) {
    throw std::invalid_argument(fmt::format("{}: declares no head dim (tiles)", where));
  }
  if (!memory.holds(kernel.tiles, static_cast<std::size_t>(kernel.tile_count) * sizeof(cfr_tile))) {
    throw std::invalid_argument(fmt::format(
        "{}: its {} tiles run past the process's readable memory", where, kernel.tile_count));
  }
  for (int i = 0; i < kernel.tile_count; ++i) {
    const cfr_tile& tile = kernel.tiles[i];
    if (tile.head_dim <= 0 || (!out.head_dims.empty() && tile.head_dim <= out.head_dims.back())) {
      throw std::invalid_argument(
          fmt::format("{}: head dim {} cannot be (head dims are positive and ascending)", where,
                      tile.head_dim));
    }
    if (tile.br <= 0 || tile.bc <= 0) {
      throw std::invalid_argument(fmt::format("{}: tile {}x{} at head dim {} cannot be", where,
                                              tile.br, tile.bc, tile.head_dim));
    }
    out.head_dims.push_back(tile.head_dim);
    // Warps, stages and CTAs per SM undeclared (0): a plugin gives its tiles only.
    out.configs.push_back({tile.head_dim, {}, {{tile.br, tile.bc}, 0, 0, 0}});
  }
}

// The served shapes a version-3 description declares (CFR_SHAPE_* bits and
// max_q_len), in the catalog's terms. A backward kernel takes square shapes
// only: the ABI has no GQA backward yet (the models count fa2_bwd's), and the
// tool's backward models have no Nk != Nq or paged cache.
ShapeSupport shapes_of(const cfr_kernel_description& kernel, const std::string& where) {
  constexpr unsigned known = CFR_SHAPE_KV_LEN | CFR_SHAPE_GQA | CFR_SHAPE_PAGED;
  if ((kernel.shapes & ~known) != 0) {
    throw std::invalid_argument(
        fmt::format("{}: unknown shape bits {:#x} (CFR_SHAPE_KV_LEN, _GQA, _PAGED)", where,
                    kernel.shapes & ~known));
  }
  if (kernel.max_q_len < 0) {
    throw std::invalid_argument(
        fmt::format("{}: max_q_len {} cannot be (0: any query length)", where, kernel.max_q_len));
  }
  if (kernel.direction == CFR_BACKWARD && kernel.shapes != 0) {
    throw std::invalid_argument(fmt::format(
        "{}: shapes {:#x}, but a backward kernel takes square shapes only", where, kernel.shapes));
  }
  return {(kernel.shapes & CFR_SHAPE_KV_LEN) != 0, (kernel.shapes & CFR_SHAPE_GQA) != 0,
          (kernel.shapes & CFR_SHAPE_PAGED) != 0, kernel.max_q_len};
}

// A description before its name is read is known by its place in the array
// and the count the plugin gave: one read past the array shows as such.
// square_only: why a description of an older ABI version takes square shapes
// only (its shapes fields read as 0; ShapeSupport::served_shapes_reason);
// empty for this version.
Translated translate(const cfr_kernel_description& kernel, std::size_t index, int kernel_count,
                     const ReadableMemory& memory, std::string_view square_only) {
  const std::string unnamed = fmt::format("kernel #{} (of kernel_count {})", index, kernel_count);
  const std::string name(text_of(kernel.name, memory, unnamed, "name"));
  if (name.empty()) throw std::invalid_argument(unnamed + ": has a null or empty name");
  const std::string where = fmt::format("kernel '{}'", name);
  const auto text = [&](const char* field_text, std::string_view field) {
    return text_of(field_text, memory, where, field);
  };
  Translated out;
  KernelDescription& d = out.description;
  d.name = text(kernel.name, "name");
  out.version = std::string(text(kernel.version, "version"));
  if (out.version.empty()) {
    throw std::invalid_argument(fmt::format("{}: has a null or empty version", where));
  }
  if (kernel.direction != CFR_FORWARD && kernel.direction != CFR_BACKWARD) {
    throw std::invalid_argument(fmt::format("{}: direction {} is not CFR_FORWARD or CFR_BACKWARD",
                                            where, kernel.direction));
  }
  d.direction = kernel.direction == CFR_FORWARD ? Direction::forward : Direction::backward;
  d.dtypes = dtypes_of(kernel.dtypes, where);
  read_tiles(kernel, memory, where, out);
  d.head_dims = out.head_dims;
  d.configs = out.configs;
  if (kernel.compute_unit != CFR_COMPUTE_SIMT && kernel.compute_unit != CFR_COMPUTE_TENSOR) {
    throw std::invalid_argument(
        fmt::format("{}: compute unit {} is not CFR_COMPUTE_SIMT or CFR_COMPUTE_TENSOR", where,
                    kernel.compute_unit));
  }
  d.arithmetic = kernel.compute_unit == CFR_COMPUTE_SIMT ? ArithmeticPath::fp32_simt
                                                         : ArithmeticPath::tensor_for_dtype;
  const std::string_view traffic_name = text(kernel.traffic_model, "traffic model");
  const auto traffic = parse_traffic_model(traffic_name);
  if (!traffic) {
    throw std::invalid_argument(
        fmt::format("{}: unknown traffic model '{}' (compulsory, materialized, kv_reload, "
                    "fa1_backward, fa2_backward, " CFR_TRAFFIC_PLUGIN ")",
                    where, traffic_name));
  }
  d.traffic = *traffic;
  const bool own_count = d.traffic == TrafficModelKind::plugin;
  if (own_count && kernel.hbm_bytes == nullptr) {
    throw std::invalid_argument(fmt::format(
        "{}: traffic model '" CFR_TRAFFIC_PLUGIN "' needs an hbm_bytes callback", where));
  }
  if (!own_count && kernel.hbm_bytes != nullptr) {
    throw std::invalid_argument(
        fmt::format("{}: has an hbm_bytes callback, which only traffic model '" CFR_TRAFFIC_PLUGIN
                    "' reads (it declares '{}')",
                    where, to_string(d.traffic)));
  }
  if (own_count) d.own_bytes = &byte_counts().emplace_back(kernel.hbm_bytes);
  d.min_compute_capability = {kernel.min_cc_major, kernel.min_cc_minor};
  const bool forward = d.direction == Direction::forward;
  if ((forward ? kernel.forward == nullptr : kernel.backward == nullptr) ||
      (forward ? kernel.backward != nullptr : kernel.forward != nullptr)) {
    throw std::invalid_argument(
        fmt::format("{}: needs a {} launch function and no other", where, to_string(d.direction)));
  }
  d.forward_partner = text(kernel.forward_partner, "forward partner");
  d.summary = text(kernel.summary, "summary");
  d.shapes = shapes_of(kernel, where);
  d.shapes.served_shapes_reason = square_only;
  return out;
}

// The bytes of one description of ABI `version` (1 to this one). Each
// version appended fields and changed nothing else, so an older description
// is this version's cut short: version 1's after `summary`, version 2's after
// `hbm_bytes`.
constexpr std::size_t description_bytes(int version) {
  switch (version) {
    case 1: return offsetof(cfr_kernel_description, hbm_bytes);
    case 2: return offsetof(cfr_kernel_description, shapes);
    default: return sizeof(cfr_kernel_description);
  }
}
static_assert(CFR_PLUGIN_ABI_VERSION == 3, "a new version has its description's size here");
static_assert(description_bytes(1) ==
                  offsetof(cfr_kernel_description, summary) + sizeof(const char*),
              "a version-1 description ends where hbm_bytes begins");
static_assert(description_bytes(2) ==
                  offsetof(cfr_kernel_description, hbm_bytes) + sizeof(cfr_hbm_bytes_fn),
              "a version-2 description ends where shapes begins");

// Whether the `bytes` at `array` are the plugin's to give: within one of its
// loaded segments when the array starts in one (a static array cannot run
// past its segment), else within readable memory (an array it built at run
// time).
bool plugin_holds(const void* array, std::size_t bytes, const std::vector<AddressRange>& segments,
                  const ReadableMemory& memory) {
  for (const AddressRange& segment : segments) {
    if (segment.holds(array, 0)) return segment.holds(array, bytes);
  }
  return memory.holds(array, bytes);
}

// The plugin's descriptions in this version's layout, read at its own
// version's stride: the fields its version lacks stay 0 (no byte past its
// array is read). kernel_count is the plugin's word: the array it claims is
// checked before a description is read or anything is allocated by the
// count, and each description is checked as it is read (translate), so a
// count beyond the array is refused, not read.
std::vector<cfr_kernel_description> descriptions_of(const cfr_plugin& plugin, void* library,
                                                    const ReadableMemory& memory,
                                                    const std::string& path) {
  const std::size_t stride = description_bytes(plugin.abi_version);
  const auto count = static_cast<std::size_t>(plugin.kernel_count);
  if (!plugin_holds(plugin.kernels, count * stride, segments_of(library), memory)) {
    refuse(path, fmt::format("kernel_count {} runs past its kernels array ({} descriptions of {} "
                             "bytes are not all in the plugin's memory)",
                             plugin.kernel_count, count, stride));
  }
  const auto* bytes = reinterpret_cast<const unsigned char*>(plugin.kernels);
  std::vector<cfr_kernel_description> out(count);
  for (std::size_t i = 0; i < count; ++i) std::memcpy(&out[i], bytes + i * stride, stride);
  return out;
}

// Points file descriptor 1 at stderr for its scope: whatever a plugin prints
// while it is loaded (its constructors) or asked for its kernels must not
// reach our stdout, which may be a report (`--json -`). C stdio's buffer is
// flushed on entry (our text goes out first) and on exit (the plugin's text
// goes to stderr with the rest of it).
class StdoutToStderr {
 public:
  StdoutToStderr() : saved_((std::fflush(stdout), ::dup(STDOUT_FILENO))) {
    if (saved_ >= 0 && ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
      ::close(saved_);
      saved_ = -1;
    }
  }
  StdoutToStderr(const StdoutToStderr&) = delete;
  StdoutToStderr& operator=(const StdoutToStderr&) = delete;
  ~StdoutToStderr() {
    std::fflush(stdout);
    if (saved_ < 0) return;
    ::dup2(saved_, STDOUT_FILENO);
    ::close(saved_);
  }

 private:
  int saved_;
};

// Opens the library and asks it for its kernels, its output sent to stderr.
std::pair<void*, const cfr_plugin*> open_plugin(const std::string& path) {
  const StdoutToStderr quiet;
  // A bare name would make dlopen search the library path, not open this file.
  const std::string open_path = path.find('/') == std::string::npos ? "./" + path : path;
  void* library = dlopen(open_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* error = dlerror();
    refuse(path, fmt::format("not a shared library this tool can load ({})",
                             error != nullptr ? error : "dlopen failed"));
  }
  void* entry = dlsym(library, CFR_PLUGIN_ENTRY_POINT);
  if (entry == nullptr) refuse(path, "has no " CFR_PLUGIN_ENTRY_POINT "() entry point");
  return {library, reinterpret_cast<cfr_plugin_kernels_fn>(entry)()};
}

}  // namespace

LoadedPlugin load_plugin(const std::string& path, KernelRegistry& registry) {
  LoadedPlugin loaded;
  loaded.file = path;
  loaded.sha256 = sha256_hex(read_bytes(path));
  const auto [library, plugin] = open_plugin(path);
  if (plugin == nullptr) refuse(path, CFR_PLUGIN_ENTRY_POINT "() returned null");
  if (plugin->abi_version < 1 || plugin->abi_version > CFR_PLUGIN_ABI_VERSION) {
    refuse(path, fmt::format("built for plugin ABI version {}, this tool reads versions 1 to {}",
                             plugin->abi_version, CFR_PLUGIN_ABI_VERSION));
  }
  if (plugin->kernels == nullptr || plugin->kernel_count <= 0) refuse(path, "describes no kernel");
  const ReadableMemory memory = ReadableMemory::of_this_process();
  const std::vector<cfr_kernel_description> descriptions =
      descriptions_of(*plugin, library, memory, path);

  // Every description is checked before any is registered, in a scratch
  // registry that holds what is registered already plus this plugin's
  // kernels: the same rules as add(), and nothing of a refused plugin stays.
  const std::string square_only =
      plugin->abi_version < 3 ? fmt::format("plugin {} uses ABI v{}, which has square shapes only",
                                            path, plugin->abi_version)
                              : std::string();
  std::vector<Translated> translated;
  try {
    for (std::size_t i = 0; i < descriptions.size(); ++i) {
      translated.push_back(
          translate(descriptions[i], i, plugin->kernel_count, memory, square_only));
    }
  } catch (const std::invalid_argument& error) {
    refuse(path, error.what());
  }
  const std::string origin = fmt::format("plugin {}", path);
  KernelRegistry scratch;
  for (const KernelEntry* existing : registry.entries()) {
    scratch.add(existing->description, existing->launcher, existing->compiled_archs,
                existing->origin);
  }
  for (std::size_t i = 0; i < translated.size(); ++i) {
    try {
      scratch.add(translated[i].description, launcher_of(descriptions[i]), {}, origin);
    } catch (const std::invalid_argument& error) {
      refuse(path, error.what());
    }
  }
  for (std::size_t i = 0; i < translated.size(); ++i) {
    registry.add(translated[i].description, launcher_of(descriptions[i]), {}, origin);
    loaded.kernels.push_back(
        {std::string(translated[i].description.name), translated[i].version, path, loaded.sha256});
  }
  return loaded;
}

}  // namespace cfr::kernels
