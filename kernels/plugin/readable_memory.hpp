#pragma once

// Which addresses this process may read, so that what a plugin hands over (a
// kernels array of kernel_count descriptions, the strings and tiles they
// point at) is checked before it is read: a count or a pointer that runs past
// the plugin's memory would otherwise end the tool with a bus error.
// Host-only; Linux (/proc/self/maps, dl_iterate_phdr).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace cfr::kernels {

struct AddressRange {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;  // one past the last byte

  // Whether [p, p + bytes) lies within, without overflow for any bytes.
  bool holds(const void* p, std::size_t bytes) const;
};

class ReadableMemory {
 public:
  // The mappings of /proc/self/maps as they are now; throws
  // std::runtime_error when the file cannot be read.
  static ReadableMemory of_this_process();
  // From the text of a maps file: the mappings whose permissions start with
  // 'r', adjacent ones joined.
  explicit ReadableMemory(std::string_view maps);

  bool holds(const void* p, std::size_t bytes) const;
  // The NUL-terminated string at `text`, or nullopt when it does not start
  // and end within readable memory.
  std::optional<std::string_view> c_string(const char* text) const;

 private:
  const AddressRange* range_of(const void* p) const;
  std::vector<AddressRange> ranges_;  // sorted, disjoint, not adjacent
};

// The address ranges of a dlopen'ed library's loaded segments (PT_LOAD, its
// zero-filled .bss included); empty if the handle names no loaded object.
std::vector<AddressRange> segments_of(void* library);

}  // namespace cfr::kernels
