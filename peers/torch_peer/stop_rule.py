"""The cold timer's bookkeeping, without the GPU: which samples are kept, when
sampling stops, and the timing record it leaves, as time_cold in
kernels/measure/cold_timer.cu keeps them. It runs inside torch's loop, so it is
Python; cold_timer.py takes the readings and feeds them here. The record is the
raw part of a report's timing: `import-samples` computes its summary.
"""

import math
import statistics
from dataclasses import dataclass

# After a throttled sample the GPU gets this long to recover (nvbench's default).
THROTTLE_RECOVERY_SECONDS = 0.050


@dataclass
class TimingOptions:
    """kernels/measure/cold_timer.hpp TimingOptions, with its defaults."""

    warmup_runs: int = 3
    min_samples: int = 10
    max_samples: int = 10000
    target_rel_stdev: float = 0.005
    max_seconds: float = 2.0  # wall-clock cap per configuration, warm-up included
    flush_l2: bool = True
    l2_flush_mode: str = "read"  # "read" or "memset" (kernels/measure/l2_flush.hpp)
    # Fraction of the device's max SM clock below which a sample is discarded as throttled.
    throttle_threshold: float = 0.75


class RunningStdev:
    """Mean and sample standard deviation kept online (Welford), as the cold
    timer's stopping test keeps them."""

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


class SampleLog:
    """Every valid reading of one configuration, in order, and the stopping test."""

    def __init__(self, options, max_sm_clock_MHz):
        self.options = options
        # No throttle test when the device reports no clock (threshold 0).
        self.throttle_MHz = options.throttle_threshold * max_sm_clock_MHz
        self.taken = []  # (ms, MHz, throttled), throttled ones included
        self.noise = RunningStdev()  # of the kept (unthrottled) samples
        self.kept = 0
        self.warmup_runs = 0
        self.stream_blocked = True
        self.stop_reason = ""
        self.noise_target_met = False

    def add(self, ms, MHz):
        """Records one reading; True when it was throttled (the caller then waits
        THROTTLE_RECOVERY_SECONDS). A probe that read nothing (MHz == 0) cannot
        call a sample throttled."""
        throttled = MHz > 0 and MHz < self.throttle_MHz
        self.taken.append((float(ms), float(MHz), throttled))
        if not throttled:
            self.kept += 1
            self.noise.add(float(ms))
        return throttled

    def discard_late(self):
        """The launch was enqueued after the GPU had reached the start event: its
        time includes host time and means nothing; it is not recorded."""
        self.stream_blocked = False

    def should_stop(self, seconds_elapsed):
        """Asked after every sample, a discarded one included; sets stop_reason."""
        o = self.options
        if self.kept >= max(o.min_samples, 1) and self.noise.relative() <= o.target_rel_stdev:
            self.noise_target_met = True
            self.stop_reason = "noise target met"
        elif self.kept >= max(o.max_samples, 1):
            self.stop_reason = "sample cap"
        elif seconds_elapsed >= o.max_seconds:
            self.stop_reason = "time cap"
        return bool(self.stop_reason)

    def timing(self):
        """The raw samples' `timing` object: the report's timing without its
        summary (docs/peers.md).

        When fewer than min_samples unthrottled samples were taken by the cap,
        the throttled ones are kept (in order) rather than report nothing."""
        kept_throttled = self.kept < max(self.options.min_samples, 1) and self.kept < len(
            self.taken
        )
        samples, clocks = [], []
        discarded = 0
        min_MHz = math.inf
        for ms, MHz, throttled in self.taken:
            if MHz > 0:
                min_MHz = min(min_MHz, MHz)
            if throttled and not kept_throttled:
                discarded += 1
                continue
            samples.append(ms)
            clocks.append(MHz)
        read = [c for c in clocks if c > 0]
        median_MHz = statistics.median(read) if read else 0.0
        timing = {
            "samples_ms": samples,
            "warmup": self.warmup_runs,
            "l2_flush": self.options.flush_l2,
            "sm_clock_MHz": median_MHz,
            "sm_clock_min_MHz": min_MHz if math.isfinite(min_MHz) else 0.0,
            "throttled": discarded > 0
            or kept_throttled
            or (median_MHz > 0 and median_MHz < self.throttle_MHz),
            "throttled_discarded": discarded,
            "throttle_threshold_percent": 100 * self.options.throttle_threshold,
            "kept_throttled": kept_throttled,
            "noise_target_met": self.noise_target_met,
            "stop_reason": self.stop_reason,
        }
        if self.options.flush_l2:
            timing["l2_flush_mode"] = self.options.l2_flush_mode
        return timing
