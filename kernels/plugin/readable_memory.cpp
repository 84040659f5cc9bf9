#include "kernels/plugin/readable_memory.hpp"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

namespace cfr::kernels {

bool AddressRange::holds(const void* p, std::size_t bytes) const {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  return at >= begin && at <= end && bytes <= end - at;
}

namespace {

std::uintptr_t hex(std::string_view text) {
  std::uintptr_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value, 16);
  return value;
}

}  // namespace

ReadableMemory ReadableMemory::of_this_process() {
  std::ifstream in("/proc/self/maps");
  if (!in) throw std::runtime_error("cannot read /proc/self/maps to check a plugin's memory");
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return ReadableMemory(text);
}

// A line is "begin-end perms offset dev inode [path]", addresses in hex.
ReadableMemory::ReadableMemory(std::string_view maps) {
  std::vector<AddressRange> readable;
  while (!maps.empty()) {
    const std::size_t eol = std::min(maps.find('\n'), maps.size());
    const std::string_view line = maps.substr(0, eol);
    maps.remove_prefix(std::min(eol + 1, maps.size()));
    const std::size_t dash = line.find('-');
    const std::size_t space = line.find(' ');
    if (dash == std::string_view::npos || space == std::string_view::npos || dash > space ||
        space + 1 >= line.size() || line[space + 1] != 'r') {
      continue;
    }
    const AddressRange range{hex(line.substr(0, dash)),
                             hex(line.substr(dash + 1, space - dash - 1))};
    if (range.begin < range.end) readable.push_back(range);
  }
  std::sort(readable.begin(), readable.end(),
            [](const AddressRange& a, const AddressRange& b) { return a.begin < b.begin; });
  for (const AddressRange& range : readable) {
    if (!ranges_.empty() && range.begin <= ranges_.back().end) {
      ranges_.back().end = std::max(ranges_.back().end, range.end);
    } else {
      ranges_.push_back(range);
    }
  }
}

const AddressRange* ReadableMemory::range_of(const void* p) const {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  const auto after = std::upper_bound(
      ranges_.begin(), ranges_.end(), at,
      [](std::uintptr_t address, const AddressRange& range) { return address < range.begin; });
  if (after == ranges_.begin()) return nullptr;
  const AddressRange& range = *std::prev(after);
  return at < range.end ? &range : nullptr;
}

bool ReadableMemory::holds(const void* p, std::size_t bytes) const {
  const AddressRange* range = range_of(p);
  return range != nullptr && range->holds(p, bytes);
}

std::optional<std::string_view> ReadableMemory::c_string(const char* text) const {
  const AddressRange* range = range_of(text);
  if (range == nullptr) return std::nullopt;
  const std::size_t room = range->end - reinterpret_cast<std::uintptr_t>(text);
  const void* nul = std::memchr(text, '\0', room);
  if (nul == nullptr) return std::nullopt;
  return std::string_view(text, static_cast<std::size_t>(static_cast<const char*>(nul) - text));
}

std::vector<AddressRange> segments_of(void* library) {
  link_map* map = nullptr;
  if (::dlinfo(library, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr) return {};
  struct Search {
    const link_map* map;
    std::vector<AddressRange> segments;
  } search{map, {}};
  ::dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto& s = *static_cast<Search*>(data);
        if (info->dlpi_addr != s.map->l_addr || info->dlpi_name == nullptr ||
            std::strcmp(info->dlpi_name, s.map->l_name) != 0) {
          return 0;
        }
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& header = info->dlpi_phdr[i];
          if (header.p_type != PT_LOAD) continue;
          const std::uintptr_t begin = info->dlpi_addr + header.p_vaddr;
          s.segments.push_back({begin, begin + header.p_memsz});
        }
        return 1;
      },
      &search);
  return search.segments;
}

}  // namespace cfr::kernels
