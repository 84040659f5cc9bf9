#include "roofline/model/l2_cache_sim.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <queue>
#include <stdexcept>

#include <fmt/format.h>

namespace cfr {

namespace {

// Byte-capacity LRU over dense ids: stream tiles are ids [0, stream_ids),
// private blocks get ids above that, recycled once evicted. The links are
// 32-bit and the bytes a separate array: a launch of a million tiles keeps
// its list in 12 MB, and each step touches one 12-byte node.
class LruCache {
 public:
  LruCache(double capacity, std::int64_t stream_ids, std::int64_t private_ids)
      : capacity_(capacity), stream_ids_(static_cast<Id>(stream_ids)) {
    if (stream_ids + private_ids >= std::numeric_limits<Id>::max()) {
      throw std::invalid_argument(fmt::format("{} stream tiles: too many to simulate", stream_ids));
    }
    nodes_.reserve(static_cast<std::size_t>(stream_ids + private_ids));
    nodes_.resize(static_cast<std::size_t>(stream_ids));
    bytes_.reserve(nodes_.capacity());
    bytes_.resize(nodes_.size(), -1);
  }

  // The bytes of stream tile `id`, computed once from `bytes_of`.
  template <typename BytesOf>
  double stream_bytes(std::int64_t id, BytesOf bytes_of) {
    double& bytes = bytes_[static_cast<std::size_t>(id)];
    if (bytes < 0) bytes = bytes_of();
    return bytes;
  }

  // Returns the bytes read from DRAM when `readers` CTAs read stream tile
  // `id` (of `bytes`, from stream_bytes) in the same step.
  double read_stream(std::int64_t id, double bytes, std::int64_t readers) {
    if (nodes_[static_cast<std::size_t>(id)].resident) {
      move_to_front(static_cast<Id>(id));
      return 0;
    }
    if (bytes > capacity_) return bytes * static_cast<double>(readers);
    insert(static_cast<Id>(id), bytes, false);
    return bytes;
  }

  // A block only this access touches: a private read, or a write (dirty).
  void touch_private(double bytes, bool dirty) {
    if (bytes <= 0) return;
    if (bytes > capacity_) {
      if (dirty) written_ += bytes;
      return;
    }
    Id id;
    if (!free_.empty()) {
      id = free_.back();
      free_.pop_back();
    } else {
      id = static_cast<Id>(nodes_.size());
      nodes_.emplace_back();
      bytes_.push_back(0);
    }
    insert(id, bytes, dirty);
  }

  double written() const { return written_; }
  double resident_dirty() const {
    double bytes = 0;
    for (Id id = head_; id >= 0; id = nodes_[static_cast<std::size_t>(id)].next) {
      if (nodes_[static_cast<std::size_t>(id)].dirty) bytes += bytes_[static_cast<std::size_t>(id)];
    }
    return bytes;
  }

 private:
  using Id = std::int32_t;
  struct Node {
    Id prev = -1;
    Id next = -1;
    bool resident = false;
    bool dirty = false;
  };

  void insert(Id id, double bytes, bool dirty) {
    while (used_ + bytes > capacity_ && tail_ >= 0) evict_tail();
    Node& node = nodes_[static_cast<std::size_t>(id)];
    bytes_[static_cast<std::size_t>(id)] = bytes;
    node.dirty = dirty;
    node.resident = true;
    node.prev = -1;
    node.next = head_;
    if (head_ >= 0) nodes_[static_cast<std::size_t>(head_)].prev = id;
    head_ = id;
    if (tail_ < 0) tail_ = id;
    used_ += bytes;
  }

  void unlink(Id id) {
    Node& node = nodes_[static_cast<std::size_t>(id)];
    if (node.prev >= 0) {
      nodes_[static_cast<std::size_t>(node.prev)].next = node.next;
    } else {
      head_ = node.next;
    }
    if (node.next >= 0) {
      nodes_[static_cast<std::size_t>(node.next)].prev = node.prev;
    } else {
      tail_ = node.prev;
    }
  }

  void move_to_front(Id id) {
    if (id == head_) return;
    unlink(id);
    Node& node = nodes_[static_cast<std::size_t>(id)];
    node.prev = -1;
    node.next = head_;
    nodes_[static_cast<std::size_t>(head_)].prev = id;
    head_ = id;
  }

  void evict_tail() {
    const Id id = tail_;
    unlink(id);
    Node& node = nodes_[static_cast<std::size_t>(id)];
    node.resident = false;
    const double bytes = bytes_[static_cast<std::size_t>(id)];
    used_ -= bytes;
    if (node.dirty) written_ += bytes;
    if (id >= stream_ids_) free_.push_back(id);
  }

  double capacity_;
  Id stream_ids_;
  std::vector<Node> nodes_;
  std::vector<double> bytes_;  // of each id; -1: a stream tile not yet read
  std::vector<Id> free_;
  Id head_ = -1;
  Id tail_ = -1;
  double used_ = 0;
  double written_ = 0;
};

// CTAs identical in start, group and range, merged: they read every tile in
// the same step.
struct Stream {
  std::int64_t start = 0;
  std::int64_t group = 0;
  std::int64_t first_tile = 0;
  std::int64_t tiles = 1;
  int passes = 1;
  std::int64_t ctas = 0;
  double own_read_bytes = 0;
  double own_write_bytes = 0;

  std::int64_t steps() const { return std::max<std::int64_t>(1, tiles * passes); }
};

void validate(const StreamedLaunch& launch, double cache_bytes) {
  const auto fail = [&](const std::string& what) {
    throw std::invalid_argument(fmt::format("launch '{}': {}", launch.name, what));
  };
  if (!(cache_bytes >= 0)) fail(fmt::format("cache capacity {} is negative", cache_bytes));
  if (launch.stagger_steps < 0 || launch.max_steps < 1) fail("negative stagger or step budget");
  if (launch.concurrency <= 0)
    fail(fmt::format("concurrency {} is not positive", launch.concurrency));
  if (launch.groups < 0 || launch.tiles_per_group < 0) fail("negative tile count");
  if (!launch.tile_bytes && !launch.ctas.empty()) fail("no tile_bytes function");
  for (const StreamedCta& cta : launch.ctas) {
    if (cta.group < 0 || cta.group >= launch.groups || cta.tiles < 0 || cta.passes < 1 ||
        cta.first_tile < 0 || cta.first_tile + cta.tiles > launch.tiles_per_group) {
      fail(fmt::format("CTA reads tiles [{}, {}) of group {}; the launch has {} groups of {} tiles",
                       cta.first_tile, cta.first_tile + cta.tiles, cta.group, launch.groups,
                       launch.tiles_per_group));
    }
  }
}

// List scheduling: each CTA, in dispatch order, starts when the earliest of
// `concurrency` slots frees; it holds the slot for tiles x passes steps.
std::vector<Stream> schedule(const StreamedLaunch& launch) {
  std::priority_queue<std::int64_t, std::vector<std::int64_t>, std::greater<>> free_at;
  const auto slots =
      std::min<std::int64_t>(launch.concurrency, static_cast<std::int64_t>(launch.ctas.size()));
  for (std::int64_t slot = 0; slot < slots; ++slot) {
    free_at.push(slots > 0 ? slot * launch.stagger_steps / slots : 0);
  }
  std::vector<Stream> streams;
  streams.reserve(launch.ctas.size());
  for (const StreamedCta& cta : launch.ctas) {
    const std::int64_t start = free_at.top();
    free_at.pop();
    const Stream stream{start,      cta.group, cta.first_tile,     cta.tiles,
                        cta.passes, 1,         cta.own_read_bytes, cta.own_write_bytes};
    free_at.push(start + stream.steps());
    Stream* previous = streams.empty() ? nullptr : &streams.back();
    if (previous != nullptr && previous->start == start && previous->group == cta.group &&
        previous->first_tile == cta.first_tile && previous->tiles == cta.tiles &&
        previous->passes == cta.passes) {
      previous->ctas += 1;
      previous->own_read_bytes += cta.own_read_bytes;
      previous->own_write_bytes += cta.own_write_bytes;
    } else {
      streams.push_back(stream);
    }
  }
  // Start times never decrease in dispatch order: each CTA takes the
  // earliest free slot and frees it no earlier than it took it.
  return streams;
}

std::int64_t tile_grouping(const StreamedLaunch& launch) {
  double steps = 0;
  for (const StreamedCta& cta : launch.ctas) {
    steps += static_cast<double>(std::max<std::int64_t>(1, cta.tiles)) * cta.passes;
  }
  std::int64_t group = 1;
  while (steps / static_cast<double>(group) > static_cast<double>(launch.max_steps)) group *= 2;
  return group;
}

// The launch with every `group` consecutive stream tiles of a group read as
// one: a CTA reads the merged tiles its range touches, one per step.
StreamedLaunch grouped(const StreamedLaunch& launch, std::int64_t group) {
  StreamedLaunch merged;
  merged.name = launch.name;
  merged.groups = launch.groups;
  merged.tiles_per_group = (launch.tiles_per_group + group - 1) / group;
  merged.concurrency = launch.concurrency;
  merged.stagger_steps = (launch.stagger_steps + group - 1) / group;
  merged.max_steps = launch.max_steps;
  merged.tile_bytes = [&launch, group](std::int64_t g, std::int64_t tile) {
    double bytes = 0;
    const std::int64_t end = std::min(launch.tiles_per_group, (tile + 1) * group);
    for (std::int64_t t = tile * group; t < end; ++t) bytes += launch.tile_bytes(g, t);
    return bytes;
  };
  merged.ctas.reserve(launch.ctas.size());
  for (StreamedCta cta : launch.ctas) {
    if (cta.tiles > 0) {
      const std::int64_t first = cta.first_tile / group;
      cta.tiles = (cta.first_tile + cta.tiles - 1) / group - first + 1;
      cta.first_tile = first;
    }
    merged.ctas.push_back(cta);
  }
  return merged;
}

}  // namespace

LaunchTraffic simulate_launch(const StreamedLaunch& launch, double cache_bytes) {
  validate(launch, cache_bytes);
  const std::int64_t group = tile_grouping(launch);
  if (group > 1) {
    LaunchTraffic traffic = simulate_launch(grouped(launch, group), cache_bytes);
    traffic.tile_group = group * traffic.tile_group;
    return traffic;
  }
  LaunchTraffic traffic;
  traffic.name = launch.name;
  const std::vector<Stream> streams = schedule(launch);
  // Private blocks in the cache at once: about two per resident CTA.
  LruCache cache(cache_bytes, launch.groups * launch.tiles_per_group, 2 * launch.concurrency);

  std::vector<const Stream*> active;
  std::size_t next = 0;
  std::int64_t step = 0;
  while (next < streams.size() || !active.empty()) {
    if (active.empty()) step = std::max(step, streams[next].start);
    for (; next < streams.size() && streams[next].start == step; ++next) {
      cache.touch_private(streams[next].own_read_bytes, false);
      traffic.own_read_bytes += streams[next].own_read_bytes;
      active.push_back(&streams[next]);
    }
    std::size_t kept = 0;
    for (const Stream* stream : active) {
      if (stream->tiles == 0) {
        cache.touch_private(stream->own_write_bytes, true);
        continue;
      }
      const std::int64_t tile = stream->first_tile + (step - stream->start) % stream->tiles;
      const std::int64_t id = stream->group * launch.tiles_per_group + tile;
      const double bytes =
          cache.stream_bytes(id, [&] { return launch.tile_bytes(stream->group, tile); });
      traffic.stream_requested_bytes += bytes * static_cast<double>(stream->ctas);
      traffic.stream_read_bytes += cache.read_stream(id, bytes, stream->ctas);
      if (step - stream->start + 1 == stream->steps()) {
        cache.touch_private(stream->own_write_bytes, true);
      } else {
        active[kept++] = stream;
      }
    }
    active.resize(kept);
    ++step;
  }
  traffic.written_bytes = cache.written();
  traffic.retained_dirty_bytes = cache.resident_dirty();
  return traffic;
}

}  // namespace cfr
