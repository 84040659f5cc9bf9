#pragma once

// Places chart labels so that none overlaps another: each label tries its
// candidate positions in order and takes the first whose box is free. The
// box of a text is estimated from its length (no font metrics in pure code):
// wide enough for DejaVu Sans, whose average glyph is about 0.6 em.

#include <optional>
#include <string_view>
#include <vector>

namespace cfr::evidence {

enum class Anchor { start, middle, end };

struct LabelBox {
  double left = 0;
  double top = 0;
  double right = 0;
  double bottom = 0;

  bool overlaps(const LabelBox& other) const;
};

// The box of `text` drawn at baseline (x, y) with this anchor and font size.
LabelBox text_box(std::string_view text, double x, double y, Anchor anchor, double font_size);

struct LabelSpot {
  double x = 0;
  double y = 0;
  Anchor anchor = Anchor::start;
};

class LabelPlacer {
 public:
  // Labels stay inside these bounds.
  LabelPlacer(double left, double top, double right, double bottom)
      : bounds_{left, top, right, bottom} {}

  // Marks a box taken (a marker, a ridge point) without a label.
  void block(const LabelBox& box) { taken_.push_back(box); }

  // The first candidate whose box is inside the bounds and free, now taken;
  // empty when none is.
  std::optional<LabelSpot> place(std::string_view text, double font_size,
                                 const std::vector<LabelSpot>& candidates);

  const std::vector<LabelBox>& taken() const { return taken_; }

 private:
  LabelBox bounds_;
  std::vector<LabelBox> taken_;
};

}  // namespace cfr::evidence
