"""Summary of timing samples, as roofline/core/statistics.cpp computes it.

The sums run over the sorted samples in the same order as the C++, so `audit`
recomputes the same doubles.
"""

import math


def quantile(sorted_samples, q):
    """Linear interpolation between order statistics (numpy's default, R's type 7)."""
    if not sorted_samples:
        return 0.0
    position = q * (len(sorted_samples) - 1)
    below = math.floor(position)
    above = min(below + 1, len(sorted_samples) - 1)
    fraction = position - below
    return sorted_samples[below] + (sorted_samples[above] - sorted_samples[below]) * fraction


def summarize(samples):
    """count, median, min, max, mean, stdev (n - 1; 0 for one sample), q1, q3."""
    summary = {"count": 0, "median": 0.0, "min": 0.0, "max": 0.0, "mean": 0.0,
               "stdev": 0.0, "q1": 0.0, "q3": 0.0}
    if not samples:
        return summary
    ordered = sorted(float(x) for x in samples)
    count = len(ordered)
    total = 0.0
    for x in ordered:
        total += x
    mean = total / count
    squares = 0.0
    for x in ordered:
        squares += (x - mean) * (x - mean)
    summary.update(
        count=count,
        min=ordered[0],
        max=ordered[-1],
        median=quantile(ordered, 0.5),
        q1=quantile(ordered, 0.25),
        q3=quantile(ordered, 0.75),
        mean=mean,
        stdev=math.sqrt(squares / (count - 1)) if count > 1 else 0.0,
    )
    return summary


def summarize_timing(timing):
    """roofline/report/row_model.cpp summarize_timing: the summary keys from samples_ms."""
    s = summarize(timing["samples_ms"])
    for key in ("median", "min", "max", "mean", "stdev", "q1", "q3"):
        timing[f"{key}_ms"] = s[key]
    return timing


class RunningStdev:
    """Mean and sample standard deviation kept online (Welford), as the cold timer's
    stopping test keeps them (kernels/measure/cold_timer.cu)."""

    def __init__(self):
        self.count = 0
        self.mean = 0.0
        self.squares = 0.0

    def add(self, x):
        self.count += 1
        delta = x - self.mean
        self.mean += delta / self.count
        self.squares += delta * (x - self.mean)

    def relative(self):
        if self.count < 2 or self.mean <= 0:
            return 0.0
        return math.sqrt(self.squares / (self.count - 1)) / self.mean
