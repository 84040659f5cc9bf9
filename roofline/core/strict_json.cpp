#include "roofline/core/strict_json.hpp"

#include <string>
#include <vector>

#include <fmt/format.h>

namespace cfr {

namespace {

using nlohmann::json;

// Builds the document as nlohmann's own DOM parser does, and keeps the key
// path of the value being read so that every refusal can name it.
class StrictBuilder {
 public:
  json take() { return std::move(root_); }

  bool null() { return value(nullptr); }
  bool boolean(bool v) { return value(v); }
  bool number_integer(json::number_integer_t v) { return value(v); }
  bool number_unsigned(json::number_unsigned_t v) { return value(v); }
  bool number_float(json::number_float_t v, const json::string_t&) { return value(v); }
  bool string(json::string_t& v) { return value(std::move(v)); }
  bool binary(json::binary_t& v) { return value(json::binary(std::move(v))); }

  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(json::string_t& name) {
    json& object = *open_.back();
    if (object.contains(name)) {
      keys_.back().clear();  // the path is the object's
      fail(
          fmt::format("key '{}' appears twice in one object (a reader would keep only one)", name));
    }
    keys_.back() = name;
    slot_ = &object[name];
    return true;
  }

  bool parse_error(std::size_t position, const std::string& token,
                   const nlohmann::detail::exception& error) {
    if (error.id == 406) {  // out_of_range: number overflow
      fail(fmt::format("number {} is outside the range of a double", token));
    }
    throw InputError(fmt::format("not valid JSON (byte {})", position));
  }

 private:
  [[noreturn]] void fail(std::string_view problem) const {
    throw InputError(fmt::format("{}: {}", path(), problem));
  }

  // The path of the value being read: a key for an object, for an array the
  // index of the element being read (the last one added, if it is an open
  // container; the next one, if the failing token is a new element).
  std::string path() const {
    std::string out;
    for (std::size_t i = 0; i < open_.size(); ++i) {
      const json& container = *open_[i];
      if (container.is_array()) {
        const bool inside_child = i + 1 < open_.size();
        const std::size_t index = container.size() - (inside_child ? 1 : 0);
        out += fmt::format("[{}]", index);
      } else if (!keys_[i].empty() || i + 1 < open_.size()) {
        out += (out.empty() ? "" : ".") + keys_[i];
      }
    }
    return out.empty() ? "(top level)" : out;
  }

  json* place(json&& v) {
    if (open_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    json& parent = *open_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    *slot_ = std::move(v);
    return slot_;
  }

  bool value(json&& v) {
    place(std::move(v));
    return true;
  }

  bool open(json&& container) {
    if (open_.size() >= max_json_depth) {
      fail(fmt::format("nested deeper than {} levels", max_json_depth));
    }
    open_.push_back(place(std::move(container)));
    keys_.emplace_back();
    return true;
  }

  bool close() {
    open_.pop_back();
    keys_.pop_back();
    return true;
  }

  json root_;
  std::vector<json*> open_;        // the containers being filled, outermost first
  std::vector<std::string> keys_;  // per open container: the key being read (objects)
  json* slot_ = nullptr;           // where the value of the last key goes
};

}  // namespace

nlohmann::json parse_strict_json(std::string_view text) {
  // nlohmann's lexer reads a NUL byte as the end of the input, so a document
  // followed by a NUL and more bytes would parse as the part before it. No
  // JSON text holds a raw NUL (a string must escape it), wherever it is.
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos) {
    throw InputError(fmt::format("not valid JSON (byte {}: a NUL byte)", nul + 1));
  }
  StrictBuilder builder;
  json::sax_parse(text.begin(), text.end(), &builder);
  return builder.take();
}

}  // namespace cfr
