#include "label_placer.hpp"

namespace cfr::evidence {

namespace {

// DejaVu Sans (label_placer.hpp): "K" 0.656 em, digits 0.636 em; its hhea
// ascent and descent.
constexpr double em_per_glyph = 0.66;
constexpr double ascent = 0.93;   // of the font size, above the baseline
constexpr double descent = 0.24;  // below it

}  // namespace

bool LabelBox::overlaps(const LabelBox& o) const {
  return left < o.right && o.left < right && top < o.bottom && o.top < bottom;
}

LabelBox text_box(std::string_view text, double x, double y, Anchor anchor, double font_size) {
  const double width = em_per_glyph * font_size * static_cast<double>(text.size());
  const double left = anchor == Anchor::start    ? x
                      : anchor == Anchor::middle ? x - width / 2
                                                 : x - width;
  return {left, y - ascent * font_size, left + width, y + descent * font_size};
}

std::optional<LabelSpot> LabelPlacer::place(std::string_view text, double font_size,
                                            const std::vector<LabelSpot>& candidates) {
  for (const LabelSpot& spot : candidates) {
    const LabelBox box = text_box(text, spot.x, spot.y, spot.anchor, font_size);
    const bool inside = box.left >= bounds_.left && box.right <= bounds_.right &&
                        box.top >= bounds_.top && box.bottom <= bounds_.bottom;
    if (!inside) continue;
    bool free = true;
    for (const LabelBox& other : taken_) free = free && !box.overlaps(other);
    if (!free) continue;
    taken_.push_back(box);
    return spot;
  }
  return std::nullopt;
}

}  // namespace cfr::evidence
