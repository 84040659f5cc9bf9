#pragma once

// Places chart labels so that none overlaps another: each label tries its
// candidate positions in order and takes the first whose box is free. The
// box of a text is estimated from its length (no font metrics in pure code):
// the box a browser gives the text in DejaVu Sans (the chart's first font,
// and Debian's), whose digits and capitals are 0.63-0.66 em wide and whose
// line runs from 0.93 em above the baseline to 0.24 em below. With the
// seed's 0.62 x (0.8 + 0.25) em, labels' boxes overlapped in Chromium by up to
// 1.3 px (tests/html/test_browser.cpp checks them as drawn, issue 24).

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
