#pragma once

// A number copied from a document stands for every value that rounds to it:
// "0.42" is anything in [0.415, 0.425). Checking a printed table against
// itself with these intervals flags only what rounding cannot explain.

namespace cfr::evidence {

struct Interval {
  double lo = 0;
  double hi = 0;

  bool contains(double x) const { return lo <= x && x <= hi; }
  bool overlaps(Interval other) const { return lo <= other.hi && other.lo <= hi; }
  double middle() const { return (lo + hi) / 2; }
};

// Half a unit in the last decimal the value needs (0 to 6 decimals). A
// trailing zero the document printed ("88.0") is lost in JSON, so the
// interval is never narrower than the printed one: a flagged difference is
// always beyond rounding.
Interval printed(double value);

Interval exact(double value);

// Products and quotients of positive intervals.
Interval operator*(Interval a, Interval b);
Interval operator/(Interval a, Interval b);

}  // namespace cfr::evidence
