#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

#include <nlohmann/json.hpp>

#include "roofline/evidence/audit.hpp"
#include "roofline/evidence/compare.hpp"
#include "roofline/evidence/roof_fraction.hpp"
#include "roofline/evidence/roofline_svg.hpp"
#include "roofline/report/report_json.hpp"
#include "sample_reports.hpp"
#include "xml_check.hpp"

using namespace cfr;
using namespace cfr::evidence;
using nlohmann::json;

namespace {

// Strings that parse as enum values somewhere in the schema, so mutated
// reports get past the reader often enough to exercise audit.
const std::vector<std::string> schema_words{
    "ok",           "failed",       "skipped",      "forward",       "backward",    "fp16",
    "bf16",         "fp32",         "exact",        "half",          "kv_reload",   "compulsory",
    "materialized", "fa1_backward", "memory-bound", "compute-bound", "fp16_tensor", "fp32_simt",
    "measured",     "historical",   "model",        "fa1_wmma",      "naive",       ""};

class Mutator {
 public:
  explicit Mutator(std::uint32_t seed) : rng_(seed) {}

  void mutate(json& document) {
    const int edits = 1 + static_cast<int>(pick(2));
    for (int i = 0; i < edits; ++i) mutate_once(document);
  }

 private:
  std::size_t pick(std::size_t n) { return rng_() % n; }

  // A random container and one of its children, by a random walk from the root.
  json* random_container(json& root) {
    json* node = &root;
    for (;;) {
      std::vector<json*> containers;
      for (auto& child : *node) {
        if ((child.is_object() || child.is_array()) && !child.empty()) containers.push_back(&child);
      }
      if (containers.empty() || pick(3) == 0) return node;
      node = containers[pick(containers.size())];
    }
  }

  std::string random_string() {
    std::string out;
    const std::size_t length = pick(40);
    for (std::size_t i = 0; i < length; ++i) out += static_cast<char>(pick(256));
    return out;
  }

  json random_number() {
    switch (pick(12)) {
      case 0: return 0;
      case 1: return -1;
      case 2: return 1e308;
      case 3: return -1e308;
      case 4: return std::numeric_limits<double>::quiet_NaN();
      case 5: return std::numeric_limits<double>::infinity();
      case 6: return std::numeric_limits<std::int64_t>::max();
      case 7: return std::numeric_limits<std::int64_t>::min();
      case 8: return std::numeric_limits<std::uint64_t>::max();
      case 9: return 4.9e-324;
      case 10: return static_cast<std::int64_t>(pick(1u << 20));
      default: return static_cast<double>(pick(1000)) / 7.0;
    }
  }

  json replacement(const json& original, const json& root) {
    if (original.is_number() && pick(2) == 0) {  // a plausible but wrong value
      return pick(3) == 0 ? random_number() : json(original.get<double>() * (pick(2) ? 1.5 : -3));
    }
    switch (pick(14)) {
      case 0: return nullptr;
      case 1: return random_string();
      case 2: return pick(2) == 0;
      case 3:
      case 4: return random_number();
      case 5: return json::array();
      case 6: return json::object();
      case 7: return schema_words[pick(schema_words.size())];
      case 8: {  // a huge array
        json huge = json::array();
        for (int i = 0; i < 20000; ++i) huge.push_back(static_cast<double>(pick(1000)));
        return huge;
      }
      case 9: {  // deep nesting
        json deep = json::array();
        for (int i = 0; i < 2000; ++i) deep = json::array({std::move(deep)});
        return deep;
      }
      case 10: return root;  // the whole document where a value was
      case 11:
        if (original.is_number()) return original.get<double>() * (pick(2) ? 1.5 : -3);
        return random_number();
      default: {  // another part of the same document: a type that is right elsewhere
        json copy = root;
        json* donor = random_container(copy);
        if (donor->empty()) return nullptr;
        auto it = donor->begin();
        std::advance(it, static_cast<std::ptrdiff_t>(pick(donor->size())));
        return *it;
      }
    }
  }

  void mutate_once(json& document) {
    const json snapshot = document;
    json* container = random_container(document);
    if (container->empty()) return;
    if (container->is_object()) {
      auto it = container->begin();
      std::advance(it, static_cast<std::ptrdiff_t>(pick(container->size())));
      if (pick(4) == 0) {
        container->erase(it);  // a dropped key
      } else {
        it.value() = replacement(it.value(), snapshot);
      }
      return;
    }
    const std::size_t index = pick(container->size());
    switch (pick(4)) {
      case 0: container->erase(index); break;
      case 1: container->push_back((*container)[index]); break;  // a duplicated row or sample
      default: (*container)[index] = replacement((*container)[index], snapshot);
    }
  }

  std::mt19937 rng_;
};

}  // namespace

TEST_CASE("thousands of mutated reports either parse or throw InputError; audit never throws") {
  // Fixed seed: the same 3000 documents on every run. Bases: a measured, a historical
  // and a model report (sample_reports.cpp).
  const std::vector<json> bases{to_json(measured_report()), to_json(seed_report("V100")),
                                to_json(model_report())};
  Mutator mutator(20261202);
  std::size_t parsed = 0;
  std::size_t rejected = 0;
  std::vector<std::string> problems;
  CompareOptions anything;
  anything.allow_unauditable = true;
  anything.allow_cross_device = true;
  for (int i = 0; i < 3000; ++i) {
    json document = bases[static_cast<std::size_t>(i) % bases.size()];
    mutator.mutate(document);
    Report report;
    try {
      report = report_from_json(document);
    } catch (const InputError& error) {
      ++rejected;
      if (std::string(error.what()).empty()) problems.push_back("empty InputError message");
      continue;
    } catch (const std::exception& error) {
      problems.push_back(std::string("reader threw a non-InputError: ") + error.what());
      continue;
    }
    ++parsed;
    try {
      const AuditResult result = audit_report(report);
      (void)render_audit(result, "fuzz.json");
      // A file can only hold valid UTF-8; strings mutated in memory need not be.
      (void)to_json(result).dump(-1, ' ', false, json::error_handler_t::replace);
      (void)render_comparison(compare_reports(report, report, anything), "a", "b");
      (void)roof_fractions(report);
      if (parsed % 5 == 0) parse_xml(roofline_svg({{"fuzz.json", &report}}, {}));
    } catch (const std::exception& error) {
      problems.push_back(
          std::string("on a parsed report: ") + error.what() + "\n" +
          document.dump(-1, ' ', false, json::error_handler_t::replace).substr(0, 2000));
    }
  }
  INFO("first problem: " << (problems.empty() ? std::string("none") : problems.front()));
  CHECK(problems.empty());
  // Both paths must be exercised, or the test proves nothing.
  CHECK(parsed > 300);
  CHECK(rejected > 300);
}
