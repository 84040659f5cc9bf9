#include "roofline/model/l2_cache_sim.hpp"

#include <algorithm>
#include <bit>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

namespace cfr {

namespace {

using Id = std::int32_t;

// A line's links in recency order; a line not in the cache has next ==
// not_resident. The links alone are what a hit touches.
struct Node {
  Id prev = -1;
  Id next = -1;
};
constexpr Id not_resident = -2;

// What only an insertion or an eviction reads.
struct Line {
  double bytes = 0;
  bool dirty = false;
};

// The arrays of one simulation, kept per thread between simulations: a launch
// of a million tiles would otherwise fault in tens of MB of fresh pages on
// every call.
struct LruStorage {
  std::vector<Node> nodes;
  std::vector<Line> lines;
  std::vector<Id> free;
};

// Byte-capacity LRU over dense ids: stream tiles are ids [0, stream_ids),
// private blocks get ids above that, recycled once evicted. A hit touches
// the 8-byte links of the line and of its neighbours; bytes and the dirty
// bit sit apart, read on insertion and eviction only.
class LruCache {
 public:
  LruCache(LruStorage& storage, double capacity, std::int64_t stream_ids, std::int64_t private_ids)
      : nodes_(storage.nodes),
        lines_(storage.lines),
        free_(storage.free),
        capacity_(capacity),
        stream_ids_(static_cast<Id>(stream_ids)) {
    if (stream_ids + private_ids >= std::numeric_limits<Id>::max()) {
      throw std::invalid_argument(fmt::format("{} stream tiles: too many to simulate", stream_ids));
    }
    nodes_.assign(static_cast<std::size_t>(stream_ids), Node{-1, not_resident});
    nodes_.reserve(static_cast<std::size_t>(stream_ids + private_ids));
    // A line's bytes are written when it enters the cache, before any read:
    // the array only grows, and is not cleared for each launch.
    grow_lines(stream_ids + private_ids);
    free_.clear();
  }

  // Whether stream tile `id` is in the cache; a hit makes it the most
  // recently used line.
  bool hit(std::int64_t id) {
    if (nodes_[static_cast<std::size_t>(id)].next == not_resident) return false;
    move_to_front(static_cast<Id>(id));
    return true;
  }

  // Returns the bytes read from DRAM when `readers` CTAs read stream tile
  // `id` of `bytes`, not in the cache (hit() false), in the same step.
  double read_missing(std::int64_t id, double bytes, std::int64_t readers) {
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
      grow_lines(std::int64_t{id} + 1);
    }
    insert(id, bytes, dirty);
  }

  double written() const { return written_; }
  void add_written(double bytes) { written_ += bytes; }
  double resident_dirty() const {
    double bytes = 0;
    for (Id id = head_; id >= 0; id = node(id).next) {
      if (line(id).dirty) bytes += line(id).bytes;
    }
    return bytes;
  }

  // Visits the resident lines from least to most recently used:
  // visit(stream id or -1 for a private block, bytes, dirty).
  template <typename Visit>
  void for_each_lru(Visit visit) const {
    for (Id id = tail_; id >= 0; id = node(id).prev) {
      visit(id < stream_ids_ ? std::int64_t{id} : std::int64_t{-1}, line(id).bytes, line(id).dirty);
    }
  }

  // The same lines in the same order, each stream tile renamed by `rename`.
  template <typename Rename>
  void rename_streams(Rename rename) {
    std::vector<Line> lines;
    std::vector<std::int64_t> ids;
    for_each_lru([&](std::int64_t id, double bytes, bool dirty) {
      ids.push_back(id);
      lines.push_back({bytes, dirty});
    });
    for (Id id = head_; id >= 0;) {
      const Id next = node(id).next;
      nodes_[static_cast<std::size_t>(id)] = Node{-1, not_resident};
      id = next;
    }
    nodes_.resize(static_cast<std::size_t>(stream_ids_));
    free_.clear();
    head_ = tail_ = -1;
    used_ = 0;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (ids[i] >= 0) {
        insert(static_cast<Id>(rename(ids[i])), lines[i].bytes, lines[i].dirty);
      } else {
        touch_private(lines[i].bytes, lines[i].dirty);
      }
    }
  }

 private:
  const Node& node(Id id) const { return nodes_[static_cast<std::size_t>(id)]; }
  const Line& line(Id id) const { return lines_[static_cast<std::size_t>(id)]; }

  void grow_lines(std::int64_t lines) {
    if (lines_.size() < static_cast<std::size_t>(lines))
      lines_.resize(static_cast<std::size_t>(lines));
  }

  void insert(Id id, double bytes, bool dirty) {
    while (used_ + bytes > capacity_ && tail_ >= 0) evict_tail();
    lines_[static_cast<std::size_t>(id)] = {bytes, dirty};
    nodes_[static_cast<std::size_t>(id)] = {-1, head_};
    if (head_ >= 0) nodes_[static_cast<std::size_t>(head_)].prev = id;
    head_ = id;
    if (tail_ < 0) tail_ = id;
    used_ += bytes;
  }

  // Reads the two links apart: one 8-byte load of a node whose 4-byte link a
  // recent step still has in the store buffer cannot be forwarded and waits
  // for the store (16 % of the sweep's time when the node was copied whole).
  void unlink(Id id) {
    const Id prev = nodes_[static_cast<std::size_t>(id)].prev;
    const Id next = nodes_[static_cast<std::size_t>(id)].next;
    if (prev >= 0) {
      nodes_[static_cast<std::size_t>(prev)].next = next;
    } else {
      head_ = next;
    }
    if (next >= 0) {
      nodes_[static_cast<std::size_t>(next)].prev = prev;
    } else {
      tail_ = prev;
    }
  }

  void move_to_front(Id id) {
    if (id == head_) return;
    unlink(id);
    nodes_[static_cast<std::size_t>(id)] = {-1, head_};
    nodes_[static_cast<std::size_t>(head_)].prev = id;
    head_ = id;
  }

  void evict_tail() {
    const Id id = tail_;
    unlink(id);
    nodes_[static_cast<std::size_t>(id)].next = not_resident;
    const Line& evicted = line(id);
    used_ -= evicted.bytes;
    if (evicted.dirty) written_ += evicted.bytes;
    if (id >= stream_ids_) free_.push_back(id);
  }

  std::vector<Node>& nodes_;
  std::vector<Line>& lines_;
  std::vector<Id>& free_;
  double capacity_;
  Id stream_ids_;
  Id head_ = -1;
  Id tail_ = -1;
  double used_ = 0;
  double written_ = 0;
};

// Consecutive CTAs identical in start, group and range, merged: they read
// every tile in the same step. `pos` is the tile of the current pass it
// reads next, `left` the steps it still holds its slot.
struct Stream {
  // What every step reads first, in one cache line; `left` 0: ended.
  // Of its first tile: the cache id, and the index of its bytes (Simulation::tile_bytes_).
  std::int64_t first_id = 0;
  std::int64_t first_bytes = 0;
  std::int64_t pos = 0;
  std::int64_t tiles = 1;
  std::int64_t left = 1;
  std::int64_t ctas = 0;
  double own_write_bytes = 0;
  std::int64_t start = 0;
  std::int64_t group = 0;
  std::int64_t first_tile = 0;
  int passes = 1;
  double own_read_bytes = 0;

  static Stream of(const StreamedCta& cta, std::int64_t start) {
    Stream stream;
    stream.start = start;
    stream.group = cta.group;
    stream.first_tile = cta.first_tile;
    stream.tiles = cta.tiles;
    stream.passes = cta.passes;
    stream.ctas = 1;
    stream.own_read_bytes = cta.own_read_bytes;
    stream.own_write_bytes = cta.own_write_bytes;
    stream.left = steps_of(cta);
    return stream;
  }
  static std::int64_t steps_of(const StreamedCta& cta) {
    return std::max<std::int64_t>(1, cta.tiles * cta.passes);
  }
  bool takes(const StreamedCta& cta) const {
    return group == cta.group && first_tile == cta.first_tile && tiles == cta.tiles &&
           passes == cta.passes;
  }
};

// A CTA's steps as max_steps counts them.
double budget_steps(const StreamedCta& cta) {
  return static_cast<double>(std::max<std::int64_t>(1, cta.tiles)) * cta.passes;
}

// Checks the launch and returns its CTA-steps (every cycle's).
double checked_steps(const StreamedLaunch& launch, double cache_bytes) {
  const auto fail = [&](const std::string& what) {
    throw std::invalid_argument(fmt::format("launch '{}': {}", launch.name, what));
  };
  if (!(cache_bytes >= 0)) fail(fmt::format("cache capacity {} is negative", cache_bytes));
  if (launch.stagger_steps < 0 || launch.max_steps < 1) fail("negative stagger or step budget");
  if (launch.concurrency <= 0)
    fail(fmt::format("concurrency {} is not positive", launch.concurrency));
  if (launch.groups < 0 || launch.tiles_per_group < 0) fail("negative tile count");
  if (launch.tile_bytes_period < 0 || launch.period_ctas < 0 || launch.period_groups < 0) {
    fail("negative period");
  }
  if (launch.cycles < 1) fail(fmt::format("{} cycles", launch.cycles));
  if (launch.cycles > 1 && launch.period_ctas != std::ssize(launch.ctas)) {
    fail(fmt::format("{} cycles of {} CTAs with a period of {}", launch.cycles, launch.ctas.size(),
                     launch.period_ctas));
  }
  if (!launch.tile_bytes && !launch.ctas.empty()) fail("no tile_bytes function");
  double steps = 0;
  for (const StreamedCta& cta : launch.ctas) {
    if (cta.group < 0 || cta.group >= launch.groups || cta.tiles < 0 || cta.passes < 1 ||
        cta.first_tile < 0 || cta.first_tile + cta.tiles > launch.tiles_per_group) {
      fail(fmt::format("CTA reads tiles [{}, {}) of group {}; the launch has {} groups of {} tiles",
                       cta.first_tile, cta.first_tile + cta.tiles, cta.group, launch.groups,
                       launch.tiles_per_group));
    }
    steps += budget_steps(cta);
  }
  return steps * static_cast<double>(launch.cycles);
}

std::int64_t tile_grouping(double steps, std::int64_t max_steps) {
  std::int64_t group = 1;
  while (steps / static_cast<double>(group) > static_cast<double>(max_steps)) group *= 2;
  return group;
}

// The launch with every `group` consecutive stream tiles of a group read as
// one: a CTA reads the merged tiles its range touches, one per step. Adds its
// CTA-steps to `steps`.
StreamedLaunch grouped(const StreamedLaunch& launch, std::int64_t group, double& steps) {
  StreamedLaunch merged;
  merged.name = launch.name;
  merged.groups = launch.groups;
  merged.tiles_per_group = (launch.tiles_per_group + group - 1) / group;
  merged.concurrency = launch.concurrency;
  merged.stagger_steps = (launch.stagger_steps + group - 1) / group;
  merged.max_steps = launch.max_steps;
  merged.tile_bytes_period = launch.tile_bytes_period;
  merged.cycles = launch.cycles;
  merged.tile_major = launch.tile_major;
  merged.period_ctas = launch.period_ctas;
  merged.period_groups = launch.period_groups;
  merged.skip_repeats = launch.skip_repeats;
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
    steps += budget_steps(cta);
  }
  steps *= static_cast<double>(launch.cycles);
  return merged;
}

// Whether the launch repeats as it claims: each CTA is the one `period_ctas`
// before it with its group moved on (so by construction with several
// cycles), and the tile bytes of a group are those of the group it is
// renamed to.
bool repeats(const StreamedLaunch& launch) {
  const std::int64_t period = launch.period_ctas;
  const std::int64_t shift = launch.period_groups;
  const std::int64_t bytes_period = launch.tile_bytes_period;
  if (!launch.skip_repeats || period <= 0 || launch.groups <= 0 || bytes_period <= 0 ||
      launch.groups % bytes_period != 0 || shift % bytes_period != 0) {
    return false;
  }
  const auto& ctas = launch.ctas;
  const std::int64_t moved = shift % launch.groups;
  for (std::size_t i = static_cast<std::size_t>(period); i < ctas.size(); ++i) {
    const StreamedCta& a = ctas[i - static_cast<std::size_t>(period)];
    const StreamedCta& b = ctas[i];
    const std::int64_t group = a.group + moved;
    if (b.group != (group < launch.groups ? group : group - launch.groups) ||
        b.first_tile != a.first_tile || b.tiles != a.tiles || b.passes != a.passes ||
        b.own_read_bytes != a.own_read_bytes || b.own_write_bytes != a.own_write_bytes) {
      return false;
    }
  }
  return true;
}

std::int64_t bits_of(double value) {
  return std::bit_cast<std::int64_t>(value);
}

// Byte counters of a launch so far.
struct Counters {
  double own_read = 0;
  double stream_read = 0;
  double written = 0;
  double requested = 0;
};

// The steps at which the scheduler's slots free, as a min-heap of (step,
// slots): slots taken at one step by CTAs of one length free together and
// are one entry, so a wave of equal CTAs costs one heap operation, not one
// per CTA.
class FreeSlots {
 public:
  void add(std::int64_t step, std::int64_t slots) {
    heap_.push_back({step, slots});
    std::push_heap(heap_.begin(), heap_.end(), later);
  }
  bool empty() const { return heap_.empty(); }
  std::int64_t earliest() const { return heap_.front().step; }
  // Takes one slot of those that free earliest.
  void take() {
    if (--heap_.front().slots > 0) return;
    std::pop_heap(heap_.begin(), heap_.end(), later);
    heap_.pop_back();
  }
  void shift(std::int64_t steps) {
    for (Entry& entry : heap_) entry.step += steps;
  }
  // Every slot's free step, ascending.
  std::vector<std::int64_t> sorted() const {
    std::vector<Entry> entries = heap_;
    std::sort(entries.begin(), entries.end(), later);
    std::vector<std::int64_t> steps;
    for (auto entry = entries.rbegin(); entry != entries.rend(); ++entry) {
      steps.insert(steps.end(), static_cast<std::size_t>(entry->slots), entry->step);
    }
    return steps;
  }

 private:
  struct Entry {
    std::int64_t step = 0;
    std::int64_t slots = 0;
  };
  static bool later(const Entry& a, const Entry& b) { return a.step > b.step; }
  std::vector<Entry> heap_;
};

// The simulation of one launch, step by step: list scheduling (each CTA, in
// dispatch order, starts when the earliest of `concurrency` slots frees and
// holds it for tiles x passes steps) run alongside the cache, with the
// repeats of its state skipped (StreamedLaunch::period_ctas).
class Simulation {
 public:
  Simulation(const StreamedLaunch& launch, double cache_bytes, LruStorage& storage)
      : launch_(launch),
        tile_stride_(launch.tile_major ? launch.groups : 1),
        // Private blocks in the cache at once: about two per resident CTA.
        cache_(storage, cache_bytes, launch.groups * launch.tiles_per_group,
               2 * launch.concurrency),
        repeats_(repeats(launch)),
        count_(launch.ctas.size() * static_cast<std::size_t>(launch.cycles)) {
    const std::int64_t period =
        launch.tile_bytes_period > 0 ? launch.tile_bytes_period : launch.groups;
    tile_bytes_.resize(static_cast<std::size_t>(period * launch.tiles_per_group));
    prefix_bytes_.resize(static_cast<std::size_t>(period * (launch.tiles_per_group + 1)));
    filled_.assign(static_cast<std::size_t>(period), false);
    const auto slots =
        std::min<std::int64_t>(launch.concurrency, static_cast<std::int64_t>(count_));
    for (std::int64_t slot = 0; slot < slots; ++slot) {
      free_.add(slot * launch.stagger_steps / slots, 1);
    }
    spacing_ = launch.period_ctas *
               std::max<std::int64_t>(1, (launch.concurrency + launch.period_ctas - 1) /
                                             std::max<std::int64_t>(1, launch.period_ctas));
  }

  LaunchTraffic run() {
    while (next_ < count_ || running() > 0) {
      if (running() == 0) step_ = std::max(step_, free_.earliest());
      dispatch();
      read_step();
      ++step_;
    }
    LaunchTraffic traffic;
    traffic.name = launch_.name;
    traffic.own_read_bytes = counters_.own_read;
    traffic.stream_read_bytes = counters_.stream_read;
    traffic.stream_requested_bytes = counters_.requested;
    traffic.written_bytes = cache_.written();
    traffic.retained_dirty_bytes = cache_.resident_dirty();
    traffic.skipped_cycles = skipped_;
    return traffic;
  }

 private:
  // Starts the CTAs whose slots free at this step, merging consecutive equal
  // ones into one stream.
  void dispatch() {
    Stream pending;
    bool has_pending = false;
    // Slots taken at this step that free at `release`: added to free_ once
    // the run of equal lengths ends (they free after this step).
    std::int64_t release = 0;
    std::int64_t released = 0;
    const auto add_released = [&] {
      if (released > 0) free_.add(release, released);
      released = 0;
    };
    while (next_ < count_ && slot_frees_now()) {
      const StreamedCta cta = next_cta();
      const bool merges = has_pending && pending.takes(cta);
      if (!merges && repeats_ && at_boundary()) {
        if (has_pending) activate(pending);
        has_pending = false;
        add_released();
        checkpoint();
        if (next_ >= count_ || !slot_frees_now()) break;
        continue;
      }
      free_.take();
      const std::int64_t frees = step_ + Stream::steps_of(cta);
      if (frees != release) add_released();
      release = frees;
      ++released;
      if (merges) {
        pending.ctas += 1;
        pending.own_read_bytes += cta.own_read_bytes;
        pending.own_write_bytes += cta.own_write_bytes;
      } else {
        if (has_pending) activate(pending);
        pending = Stream::of(cta, step_);
        has_pending = true;
      }
      advance();
    }
    if (has_pending) activate(pending);
    add_released();
  }

  // CTA next_ of the launch: its cycle's CTA with the group moved on.
  StreamedCta next_cta() const {
    StreamedCta cta = launch_.ctas[in_cycle_];
    cta.group += cycle_group_;
    if (cta.group >= launch_.groups) cta.group -= launch_.groups;
    return cta;
  }

  void advance() {
    ++next_;
    if (++in_cycle_ < launch_.ctas.size()) return;
    in_cycle_ = 0;
    cycle_group_ += launch_.period_groups % launch_.groups;
    if (cycle_group_ >= launch_.groups) cycle_group_ -= launch_.groups;
  }

  void seek(std::size_t next) {
    next_ = next;
    const std::size_t size = std::max<std::size_t>(1, launch_.ctas.size());
    in_cycle_ = next % size;
    const auto cycle = static_cast<std::int64_t>(next / size);
    cycle_group_ =
        launch_.groups > 0
            ? cycle % launch_.groups * (launch_.period_groups % launch_.groups) % launch_.groups
            : 0;
  }

  // Slots taken in this step's dispatch are not in free_ until it ends.
  bool slot_frees_now() const { return !free_.empty() && free_.earliest() == step_; }

  void activate(Stream& stream) {
    cache_.touch_private(stream.own_read_bytes, false);
    counters_.own_read += stream.own_read_bytes;
    const std::int64_t key = locate(stream);
    // Each of its CTAs reads its range `passes` times, hit or miss: counted
    // here once rather than at every read.
    if (stream.tiles > 0) {
      counters_.requested += static_cast<double>(stream.ctas * stream.passes) *
                             range_bytes(key, stream.first_tile, stream.tiles);
    }
    active_.push_back(stream);
  }

  // The groups whose tiles have the same bytes share a key (tile_bytes_period).
  std::int64_t key_of(std::int64_t group) const {
    return launch_.tile_bytes_period > 0 ? group % launch_.tile_bytes_period : group;
  }

  // The bytes of tiles [first, first + tiles) of a group of `key`. A key's
  // tile bytes are asked of tile_bytes once, all at its first stream, and
  // summed in tile order; a range is the difference of two sums (exact for
  // whole byte counts, the only ones the model gives).
  double range_bytes(std::int64_t key, std::int64_t first, std::int64_t tiles) {
    const std::size_t row =
        static_cast<std::size_t>(key) * static_cast<std::size_t>(launch_.tiles_per_group + 1);
    if (!filled_[static_cast<std::size_t>(key)]) fill(key);
    return prefix_bytes_[row + static_cast<std::size_t>(first + tiles)] -
           prefix_bytes_[row + static_cast<std::size_t>(first)];
  }

  [[gnu::noinline]] void fill(std::int64_t key) {
    const auto tiles_per_group = static_cast<std::size_t>(launch_.tiles_per_group);
    const std::size_t row = static_cast<std::size_t>(key) * (tiles_per_group + 1);
    filled_[static_cast<std::size_t>(key)] = true;
    prefix_bytes_[row] = 0;
    for (std::size_t tile = 0; tile < tiles_per_group; ++tile) {
      const double bytes = launch_.tile_bytes(key, static_cast<std::int64_t>(tile));
      tile_bytes_[static_cast<std::size_t>(key) * tiles_per_group + tile] = bytes;
      prefix_bytes_[row + tile + 1] = prefix_bytes_[row + tile] + bytes;
    }
  }

  // The cache id of tile `tile` of `group` (StreamedLaunch::tile_major), and back.
  std::int64_t line_id(std::int64_t group, std::int64_t tile) const {
    return launch_.tile_major ? tile * launch_.groups + group
                              : group * launch_.tiles_per_group + tile;
  }
  std::int64_t group_of(std::int64_t id) const {
    return launch_.tile_major ? id % launch_.groups : id / launch_.tiles_per_group;
  }
  std::int64_t tile_of(std::int64_t id) const {
    return launch_.tile_major ? id / launch_.groups : id % launch_.tiles_per_group;
  }

  // Sets where the stream's first tile is; returns its group's key.
  std::int64_t locate(Stream& stream) const {
    const std::int64_t key = key_of(stream.group);
    stream.first_id = line_id(stream.group, stream.first_tile);
    stream.first_bytes = key * launch_.tiles_per_group + stream.first_tile;
    return key;
  }

  // Every running stream reads its next tile; those that end write their own.
  // Ended streams stay in place until an eighth of the list has ended, so
  // the running ones keep their order without being moved each step. A hit
  // needs no bytes. The DRAM reads are summed in a local, in the same order:
  // in the member, each sum went through memory (the cache's calls might
  // have written it).
  void read_step() {
    double stream_read = counters_.stream_read;
    const std::int64_t stride = tile_stride_;
    std::size_t ended = ended_;
    for (Stream& stream : active_) {
      if (stream.left == 0) continue;
      if (stream.tiles > 0) {
        const std::int64_t id = stream.first_id + stream.pos * stride;
        if (!cache_.hit(id)) {
          const double bytes =
              tile_bytes_[static_cast<std::size_t>(stream.first_bytes + stream.pos)];
          stream_read += cache_.read_missing(id, bytes, stream.ctas);
        }
        if (++stream.pos == stream.tiles) stream.pos = 0;
      }
      if (--stream.left == 0) {
        cache_.touch_private(stream.own_write_bytes, true);
        ++ended;
      }
    }
    counters_.stream_read = stream_read;
    ended_ = ended;
    if (ended_ * 8 > active_.size()) drop_ended();
  }

  void drop_ended() {
    std::erase_if(active_, [](const Stream& stream) { return stream.left == 0; });
    ended_ = 0;
  }

  std::size_t running() const { return active_.size() - ended_; }

  bool at_boundary() const {
    const auto next = static_cast<std::int64_t>(next_);
    return next % launch_.period_ctas == 0 && next >= last_checkpoint_ + spacing_;
  }

  // The group of the CTA `next_` is about to start is renamed to this one.
  std::int64_t base_group() const {
    const auto cycles = static_cast<std::int64_t>(next_) / launch_.period_ctas;
    return (cycles % launch_.groups) * (launch_.period_groups % launch_.groups) % launch_.groups;
  }

  std::int64_t relative(std::int64_t group, std::int64_t base) const {
    return (group - base + launch_.groups) % launch_.groups;
  }

  // The state, with time counted from this step and groups from the base
  // group, in two parts: the schedule (free slots, running streams), and the
  // cache's lines, which cost far more to list and are listed only when the
  // schedule has been seen before.
  std::vector<std::int64_t> schedule_state() const {
    const std::int64_t base = base_group();
    std::vector<std::int64_t> state;
    const std::vector<std::int64_t> free = free_.sorted();
    state.push_back(static_cast<std::int64_t>(free.size()));
    for (std::int64_t at : free) state.push_back(at - step_);
    state.push_back(static_cast<std::int64_t>(active_.size()));
    for (const Stream& s : active_) {
      state.insert(state.end(),
                   {s.start - step_, relative(s.group, base), s.first_tile, s.tiles, s.passes,
                    s.ctas, bits_of(s.own_read_bytes), bits_of(s.own_write_bytes), s.pos, s.left});
    }
    return state;
  }

  std::vector<std::int64_t> cache_state() const {
    const std::int64_t base = base_group();
    const std::int64_t tiles = std::max<std::int64_t>(1, launch_.tiles_per_group);
    std::vector<std::int64_t> state;
    cache_.for_each_lru([&](std::int64_t id, double bytes, bool dirty) {
      const std::int64_t line = id < 0 ? -1 : relative(group_of(id), base) * tiles + tile_of(id);
      state.insert(state.end(), {line, bits_of(bytes), dirty ? 1 : 0});
    });
    return state;
  }

  struct Checkpoint {
    std::int64_t step = 0;
    std::size_t next = 0;
    Counters counters;
    double written = 0;
    std::vector<std::int64_t> schedule;
    std::optional<std::vector<std::int64_t>> cache;  // listed when the schedule had been seen
  };

  // At a period boundary: if the state equals, renamed and shifted, one seen
  // at an earlier boundary, the cycles between them repeat until the CTAs
  // run out; skip all whole cycles that remain.
  void checkpoint() {
    last_checkpoint_ = static_cast<std::int64_t>(next_);
    drop_ended();
    Checkpoint now{step_, next_, counters_, cache_.written(), schedule_state(), std::nullopt};
    const auto same_schedule = [&](const Checkpoint& seen) {
      return seen.schedule == now.schedule;
    };
    if (std::any_of(checkpoints_.begin(), checkpoints_.end(), same_schedule)) {
      now.cache = cache_state();
      for (const Checkpoint& seen : checkpoints_) {
        if (same_schedule(seen) && seen.cache == now.cache) {
          skip(seen, now);
          checkpoints_.clear();
          return;
        }
      }
    }
    if (checkpoints_.size() >= 64) checkpoints_.erase(checkpoints_.begin());
    checkpoints_.push_back(std::move(now));
  }

  void skip(const Checkpoint& seen, const Checkpoint& now) {
    const auto ctas = static_cast<std::int64_t>(now.next - seen.next);
    const auto cycles = (static_cast<std::int64_t>(count_ - now.next)) / ctas;
    if (cycles == 0) return;
    const std::int64_t steps = (now.step - seen.step) * cycles;
    const std::int64_t shift = (ctas / launch_.period_ctas * cycles % launch_.groups) *
                               (launch_.period_groups % launch_.groups) % launch_.groups;
    const auto times = static_cast<double>(cycles);
    counters_.own_read += (now.counters.own_read - seen.counters.own_read) * times;
    counters_.stream_read += (now.counters.stream_read - seen.counters.stream_read) * times;
    counters_.requested += (now.counters.requested - seen.counters.requested) * times;
    cache_.add_written((now.written - seen.written) * times);
    const auto renamed = [&](std::int64_t group) { return (group + shift) % launch_.groups; };
    cache_.rename_streams(
        [&](std::int64_t id) { return line_id(renamed(group_of(id)), tile_of(id)); });
    for (Stream& stream : active_) {
      stream.start += steps;
      stream.group = renamed(stream.group);
      locate(stream);
    }
    free_.shift(steps);
    step_ += steps;
    seek(next_ + static_cast<std::size_t>(ctas * cycles));
    last_checkpoint_ = static_cast<std::int64_t>(next_);
    skipped_ += cycles;
  }

  const StreamedLaunch& launch_;
  std::int64_t tile_stride_;  // between the ids of a group's consecutive tiles
  LruCache cache_;
  bool repeats_;
  // Per tile of the groups below tile_bytes_period (filled_ per group): its
  // bytes, and the sums of a group's bytes up to each tile.
  std::vector<double> tile_bytes_;
  std::vector<double> prefix_bytes_;
  std::vector<bool> filled_;
  FreeSlots free_;
  std::vector<Stream> active_;  // in the order they started; ended_ of them have ended
  std::size_t ended_ = 0;
  std::size_t count_;             // CTAs of every cycle
  std::size_t next_ = 0;          // the next CTA to start
  std::size_t in_cycle_ = 0;      // its index in launch_.ctas
  std::int64_t cycle_group_ = 0;  // how far its cycle moves its group
  std::int64_t step_ = 0;
  Counters counters_;
  std::int64_t spacing_ = 0;  // CTAs at least between two checkpoints
  std::int64_t last_checkpoint_ = std::numeric_limits<std::int64_t>::min() / 2;
  std::vector<Checkpoint> checkpoints_;
  std::int64_t skipped_ = 0;
};

// The launch with every CTA of every cycle listed and its lines group by
// group: what the shortcuts are checked against (StreamedLaunch::skip_repeats).
StreamedLaunch listed(const StreamedLaunch& launch) {
  StreamedLaunch all = launch;
  all.cycles = 1;
  all.tile_major = false;
  all.ctas.clear();
  all.ctas.reserve(launch.ctas.size() * static_cast<std::size_t>(launch.cycles));
  const std::int64_t moved = launch.groups > 0 ? launch.period_groups % launch.groups : 0;
  for (std::int64_t cycle = 0; cycle < launch.cycles; ++cycle) {
    for (StreamedCta cta : launch.ctas) {
      cta.group = (cta.group + cycle % std::max<std::int64_t>(1, launch.groups) * moved) %
                  std::max<std::int64_t>(1, launch.groups);
      all.ctas.push_back(cta);
    }
  }
  return all;
}

// A valid launch of `steps` CTA-steps.
LaunchTraffic simulate_valid(const StreamedLaunch& launch, double cache_bytes, double steps) {
  const std::int64_t group = tile_grouping(steps, launch.max_steps);
  if (group > 1) {
    double merged_steps = 0;
    const StreamedLaunch merged = grouped(launch, group, merged_steps);
    LaunchTraffic traffic = simulate_valid(merged, cache_bytes, merged_steps);
    traffic.tile_group = group * traffic.tile_group;
    return traffic;
  }
  thread_local LruStorage storage;
  return Simulation(launch, cache_bytes, storage).run();
}

}  // namespace

LaunchTraffic simulate_launch(const StreamedLaunch& launch, double cache_bytes) {
  const double steps = checked_steps(launch, cache_bytes);
  if (launch.skip_repeats || (launch.cycles == 1 && !launch.tile_major)) {
    return simulate_valid(launch, cache_bytes, steps);
  }
  return simulate_valid(listed(launch), cache_bytes, steps);
}

}  // namespace cfr
