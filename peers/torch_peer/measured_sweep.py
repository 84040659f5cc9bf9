"""The measuring half of torch_sdpa.py, following app/measured_sweep.cpp: every
(problem, backend) on one device, the raw samples rewritten atomically after
each row (marked unfinished until the last), Ctrl-C finishing the current row,
skipping the rest and still writing them. The figures are the tool's:
torch_sdpa.py runs `import-samples` on what this writes.

Returns 0 when the raw samples were written (130 when interrupted), 2 when
nothing could be measured (no device, no driver).
"""

import signal
import sys
import time

from . import raw_samples
from .backends import (BACKENDS, BackendRunner, backward_gap, math_upcasts, missing_from_build,
                       shape_gap)
from .cold_timer import ColdTimer
from .cuda_driver import CU_DEVICE_ATTRIBUTE_CLOCK_RATE, CudaDriver, DriverError, SmClockReader
from .device_record import device_record, environment_record

GIB = 1024.0 ** 3
NOT_REACHED = ("not measured: the run had not reached this configuration when this copy was "
               "written")


class Interrupt:
    """SIGINT and SIGTERM set a flag; the row in progress finishes."""

    def __init__(self):
        self.requested = False
        self._previous = {}

    def __enter__(self):
        for number in (signal.SIGINT, signal.SIGTERM):
            self._previous[number] = signal.signal(number, self._handle)
        return self

    def _handle(self, number, frame):
        self.requested = True

    def __exit__(self, *exc):
        for number, handler in self._previous.items():
            signal.signal(number, handler)


def arithmetic(backend, upcast):
    """Each backend's arithmetic as torch documents it: the fused kernels on the
    tensor unit of the I/O dtype; math in fp32 when it upcasts fp16 and bf16
    (TF32 is off, so its matmuls are fp32 FMAs). The tool maps it to a compute
    unit, fp32 I/O to fp32_simt whatever the path."""
    return "fp32_simt" if backend.name == "math" and upcast else "tensor_for_dtype"


def direction_of(backward):
    return "backward" if backward else "forward"


def describe(problem, backend, direction):
    return f"{backend.kernel} {direction} {problem.describe()}"


class SweepState:
    """The raw samples, their progress lines, and their rewrite after each row."""

    def __init__(self, raw, samples_path, measurable):
        self.raw = raw
        self.samples_path = samples_path
        self.measurable = measurable
        self.done = 0
        self.start = time.monotonic()
        self.finished_rows = set()

    def begin(self, text, device):
        eta = "ETA -"
        if self.done:
            elapsed = time.monotonic() - self.start
            eta = f"ETA {elapsed / self.done * (self.measurable - self.done):.0f} s"
        print(f"[{self.done + 1}/{self.measurable}] device {device}: {text} ({eta})",
              file=sys.stderr, flush=True)

    def finish(self, index):
        self.done += 1
        self.finished_rows.add(index)
        row = self.raw["results"][index]
        if row["status"] != "ok":
            print(f"    {row['status']}: {row['reason']}", file=sys.stderr, flush=True)
        elif row.get("timing"):
            timing = row["timing"]
            print(f"    {len(timing['samples_ms'])} samples ({timing['stop_reason']})",
                  file=sys.stderr, flush=True)
        self.write_partial()

    def write_partial(self):
        """A row not reached yet is written as skipped, saying so, as the sweep
        writes its partial reports."""
        partial = raw_samples.unfinished(
            self.raw, f"incomplete: {self.done} of {self.measurable} configurations done")
        partial["results"] = [
            dict(row, status="skipped", reason=NOT_REACHED)
            if row["status"] == "ok" and index not in self.finished_rows else row
            for index, row in enumerate(self.raw["results"])]
        raw_samples.write_atomically(self.samples_path, raw_samples.text(partial))


def plan_rows(problems, backends, build_gaps, device, shape_gap=lambda problem: "",
              direction="forward"):
    """(problem, backend, raw row) for every pair, problems outside; a problem
    no backend can be asked for (shape_gap: a paged cache, ...; for the
    backward, Nq != Nk or a paged cache) and a backend this torch lacks
    are skipped rows, saying why."""
    rows = []
    for problem in problems:
        for backend in backends:
            gap = (shape_gap(problem) or (backward_gap(problem) if direction == "backward" else "")
                   or build_gaps[backend.name])
            row = raw_samples.row(backend.kernel, problem, device, "skipped" if gap else "ok",
                                  gap, direction)
            rows.append((problem, backend, row))
    return rows


def apply_outcome(row, outcome):
    row["status"], row["reason"] = outcome.status, outcome.reason
    if outcome.status == "ok":
        row["check"] = outcome.check
        row["timing"] = outcome.timing


def finish(raw, samples_path, notes, interrupted):
    """The last write of the raw samples: whole-run notes, and whether the run
    finished."""
    raw["provenance"]["reasons"] += notes
    if interrupted:
        raw = raw_samples.unfinished(raw, "interrupted (Ctrl-C): not every configuration ran")
    raw_samples.write_atomically(samples_path, raw_samples.text(raw))
    counts = {s: sum(1 for r in raw["results"] if r["status"] == s)
              for s in ("ok", "skipped", "failed")}
    print(f"torch_sdpa.py: wrote {samples_path}: {counts['ok']} measured, {counts['skipped']} "
          f"skipped, {counts['failed']} failed", file=sys.stderr, flush=True)
    return 130 if interrupted else 0


def backends_of(torch, names):
    """The backends to run, in the order asked (or every one this torch has)."""
    names = names or [b.name for b in BACKENDS if not missing_from_build(torch, b)]
    chosen = [b for b in BACKENDS if b.name in names]
    chosen.sort(key=lambda b: names.index(b.name))
    return chosen


def run_measurement(args, problems, backend_names, device, timing, tool, provenance,
                    samples_path, platform_module):
    import torch

    if not torch.cuda.is_available() or device >= torch.cuda.device_count():
        print(f"torch_sdpa.py: error: no CUDA device {device} visible to torch "
              f"{torch.__version__}: nothing to measure", file=sys.stderr)
        return 2
    torch.cuda.set_device(device)
    # fp32 matmuls stay fp32 (no TF32): the reference, and math's fp32 path.
    torch.set_float32_matmul_precision("highest")
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        driver = CudaDriver()
        record = device_record(torch, driver, device)
    except DriverError as error:
        print(f"torch_sdpa.py: error: {error}", file=sys.stderr)
        return 2
    provenance["environment"] = environment_record(torch, platform_module)
    backends = backends_of(torch, backend_names)
    upcast = math_upcasts(torch)
    planned = plan_rows(problems, backends, {b.name: missing_from_build(torch, b)
                                             for b in backends}, device,
                        lambda problem: shape_gap(problem, torch.__version__),
                        direction_of(args.backward))
    raw = raw_samples.document(
        tool, provenance, [record],
        [{"kernel": b.kernel, "arithmetic": arithmetic(b, upcast)} for b in backends],
        [row for _, _, row in planned])

    max_MHz = driver.attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE, device) / 1000.0
    clock = SmClockReader(record["pci_bus_id"])
    if not clock.available:
        print("WARNING: NVML unavailable: no SM clock per sample, no throttle test",
              file=sys.stderr)
    timer = ColdTimer(torch, driver, clock, device, timing, max_MHz, record["l2_bytes"])
    budget = (args.math_budget_gib * GIB if args.math_budget_gib is not None
              else record["memory_bytes"] / 2)
    runner = BackendRunner(torch, device, timer, args.seed, budget, args.backward)
    state = SweepState(raw, samples_path,
                       sum(1 for _, _, row in planned if row["status"] == "ok"))
    notes, lost = [], ""
    with Interrupt() as interrupt:
        for index, (problem, backend, row) in enumerate(planned):
            if row["status"] != "ok":
                continue
            if interrupt.requested:
                row["status"] = "skipped"
                row["reason"] = "interrupted before this configuration ran"
            elif lost:
                row["status"], row["reason"] = "failed", lost
            else:
                text = describe(problem, backend, direction_of(args.backward))
                state.begin(text, device)
                outcome = runner.run(problem, backend)
                apply_outcome(row, outcome)
                notes += [f"{text}: {note}" for note in outcome.notes]
                if outcome.device_lost:
                    lost = f"device {device} lost after: {outcome.reason}"
            state.finish(index)
    return finish(raw, samples_path, notes, interrupt.requested)
