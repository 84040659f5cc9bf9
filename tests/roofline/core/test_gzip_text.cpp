// roofline/core/gzip_text.hpp: the committed reports over 1 MiB are gzip
// files, read as the text they hold.

#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include <zlib.h>

#include "roofline/core/gzip_text.hpp"
#include "tests/source_text.hpp"

using namespace cfr;

namespace {

// `text` as gzip -9 writes it (a gzip wrapper around deflate).
std::string gzip(const std::string& text) {
  z_stream stream{};
  REQUIRE(deflateInit2(&stream, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&stream, text.size()) + 32, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&stream, Z_FINISH) == Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

}  // namespace

TEST_CASE("gzip bytes are read as the text they hold; other bytes as they are") {
  std::string report = "{\"results\": [";
  for (int i = 0; i < 20000; ++i) report += std::to_string(0.05 + i * 1e-6) + ",";
  report += "0]}\n";
  const std::string packed = gzip(report);
  CHECK(is_gzip(packed));
  CHECK(packed.size() < report.size() / 4);
  CHECK(gunzip(packed, 1 << 20) == report);
  CHECK(text_of_file_bytes(packed, 1 << 20) == report);
  CHECK_FALSE(is_gzip(report));
  CHECK(text_of_file_bytes(report, 1 << 20) == report);
  CHECK(text_of_file_bytes("", 1 << 20).empty());
  // Two members, as `cat a.gz b.gz` makes, are one text.
  CHECK(gunzip(gzip("ab") + gzip("cd"), 100) == "abcd");
}

TEST_CASE("a truncated, corrupt or oversized gzip stream is refused, not read short") {
  const std::string packed = gzip(std::string(100000, 'x'));
  CHECK_THROWS_WITH(gunzip(packed.substr(0, packed.size() / 2), 1 << 20), "gzip: truncated stream");
  std::string corrupt = packed;
  corrupt[12] = static_cast<char>(corrupt[12] ^ 0x55);
  CHECK_THROWS_AS(gunzip(corrupt, 1 << 20), std::runtime_error);
  CHECK_THROWS_WITH(gunzip(packed, 1 << 10),
                    Catch::Contains("inflates to more than") && Catch::Contains("not a file"));
  CHECK_THROWS_WITH(gunzip(packed + "tail", 1 << 20), "gzip: bytes after the end of the stream");
}

TEST_CASE("every committed report over 1 MiB is stored compressed, and reads back as JSON") {
  // results/compress.sh's rules, kept: the tree travels to the device machine under 64 MiB.
  // Reports over 1 MiB; of lent H100s' (results/h100/), those of version comparisons
  // (*/versions/) over 64 KiB and the others over 256 KiB; of the H200's, those over
  // 256 KiB outside profile/ and decode-dev/ (which Python scripts read as JSON);
  // nothing else.
  int compressed = 0;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(CFR_SOURCE_ROOT "/results")) {
    const std::string name = entry.path().filename().string();
    const std::string path = entry.path().generic_string();
    const bool h100 = path.find("/results/h100/") != std::string::npos;
    const bool h200_read_as_report = path.find("/results/h200/") != std::string::npos &&
                                     path.find("/profile/") == std::string::npos &&
                                     path.find("/decode-dev/") == std::string::npos;
    const bool version_comparison = h100 && path.find("/versions/") != std::string::npos;
    const std::size_t limit = version_comparison            ? std::size_t{64} << 10
                              : h100 || h200_read_as_report ? std::size_t{256} << 10
                                                            : std::size_t{1} << 20;
    INFO(path);
    if (name.ends_with(".json")) CHECK(entry.file_size() <= limit);
    if (!name.ends_with(".json.gz")) continue;
    ++compressed;
    const std::string text = test::read_source_text(entry.path());
    CHECK(text.starts_with("{"));
    CHECK(text.size() > limit);  // only what is over its limit
  }
  CHECK(compressed >= 8);
}

TEST_CASE("a report's file name: X.json or X.json.gz, both the report X.json", "[gzip]") {
  CHECK(cfr::is_report_file_name("sweep.json"));
  CHECK(cfr::is_report_file_name("sweep.json.gz"));
  CHECK_FALSE(cfr::is_report_file_name("sweep.gz"));
  CHECK_FALSE(cfr::is_report_file_name("sweep.json.txt"));
  CHECK_FALSE(cfr::is_report_file_name("json"));
  CHECK(cfr::report_name_of("sweep.json.gz") == "sweep.json");
  CHECK(cfr::report_name_of("sweep.json") == "sweep.json");
  CHECK(cfr::report_name_of("notes.txt.gz") == "notes.txt.gz");
}
