"""The cold measurement loop for a launch made through torch, following
kernels/measure/cold_timer.cu step for step; stop_rule.py keeps the samples and
decides when to stop.

Per sample: flush L2 (a read of twice the L2, or a memset over it, on the
stream), synchronize, hold the stream, record the start event, launch, record
the stop event, synchronize, read the SM clock.

Two readings differ from the tool's, because a Python script cannot load its
probe kernels:
- The stream is held by torch.cuda._sleep (a kernel that spins for a number of
  cycles) rather than by a kernel spinning on a host flag. If the GPU has
  already passed the start event when the host has finished enqueuing, the
  launch may have started late and the sample is discarded, as the tool
  discards a sample whose blocker timed out; the spin is then doubled, and
  given up beyond MAX_HOLD_SECONDS (the samples then include host launch time,
  and the caller records that).
- The SM clock is NVML's reading right after each sample, not cycles over
  %globaltimer across the launch.
"""

import time

from .stop_rule import THROTTLE_RECOVERY_SECONDS, SampleLog

FIRST_HOLD_SECONDS = 0.001
MAX_HOLD_SECONDS = 0.1


class L2Flusher:
    """kernels/measure/l2_flush.cu over 2 x L2 bytes. "read": a reduction reads the
    whole (zero) buffer on the stream, leaving the L2 clean; "memset": a memset with
    an alternating byte, so no flush writes what the previous one did, leaving the
    L2 dirty."""

    def __init__(self, torch, driver, device, l2_bytes, mode):
        self._torch = torch
        self._driver = driver
        self._mode = mode
        self._buffer = None
        self._fill = 0
        if l2_bytes > 0:
            self._buffer = torch.zeros(2 * int(l2_bytes), dtype=torch.uint8,
                                       device=torch.device("cuda", device))
            self._words = self._buffer.view(torch.int32)

    def flush(self, stream):
        if self._buffer is None:
            return
        if self._mode == "read":
            with self._torch.cuda.stream(stream):
                self._words.sum()
            return
        self._fill ^= 0x5A
        self._driver.memset_async(self._buffer.data_ptr(), self._fill, self._buffer.numel(),
                                  stream.cuda_stream)


class ColdTimer:
    """One per device; time(launch) for each configuration."""

    def __init__(self, torch, driver, clock, device, options, max_sm_clock_MHz, l2_bytes):
        self._torch = torch
        self._clock = clock
        self._device = device
        self._options = options
        self._max_MHz = max_sm_clock_MHz
        self._flusher = (L2Flusher(torch, driver, device, l2_bytes, options.l2_flush_mode)
                         if options.flush_l2 else None)
        self._hold_seconds = FIRST_HOLD_SECONDS
        # A private torch helper (its own tests' spin kernel); without it nothing holds.
        self._can_hold = hasattr(torch.cuda, "_sleep")

    def _flush(self, stream):
        if self._flusher is not None:
            self._flusher.flush(stream)

    def _hold(self):
        """Spins the current stream for about _hold_seconds at the max clock."""
        MHz = self._max_MHz if self._max_MHz > 0 else 2000.0
        self._torch.cuda._sleep(int(self._hold_seconds * MHz * 1e6))

    def time(self, launch):
        """launch() enqueues the work once on the current stream. Returns
        (timing object, stream_held): stream_held is False when holding the
        stream was given up and the samples include host launch time."""
        torch = self._torch
        stream = torch.cuda.current_stream(self._device)
        wall_start = time.monotonic()
        log = SampleLog(self._options, self._max_MHz)
        for _ in range(self._options.warmup_runs):
            self._flush(stream)
            launch()
            stream.synchronize()
            log.warmup_runs += 1
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        hold = self._can_hold
        while True:
            self._flush(stream)
            stream.synchronize()
            if hold:
                self._hold()
            start.record(stream)
            launch()
            stop.record(stream)
            late = hold and start.query()
            stream.synchronize()
            if late:
                log.discard_late()
                self._hold_seconds *= 2
                if self._hold_seconds > MAX_HOLD_SECONDS:
                    hold = False  # for this configuration; the next one tries again
                    self._hold_seconds = FIRST_HOLD_SECONDS
            else:
                ms = start.elapsed_time(stop)
                if log.add(ms, self._clock.MHz()):
                    time.sleep(THROTTLE_RECOVERY_SECONDS)
            if log.should_stop(time.monotonic() - wall_start):
                break
        return log.timing(), hold
