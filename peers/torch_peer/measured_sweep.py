"""The measuring half of torch_sdpa.py, following app/measured_sweep.cpp: every
(problem, backend) on one device, the report rewritten atomically after each
row (marked incomplete and not auditable until the last), Ctrl-C finishing the
current row, skipping the rest and still writing the report.

Exit status: 0 when every row is ok or skipped, 1 when a row failed, 130 when
interrupted, 2 when nothing could be measured (no device, bad ceiling).
"""

import signal
import sys
import time

from roofline_port import ceiling as ceilings, figures, report as reports

from .backends import BACKENDS, BackendRunner, math_upcasts, missing_from_build
from .cold_timer import ColdTimer
from .cuda_driver import CU_DEVICE_ATTRIBUTE_CLOCK_RATE, CudaDriver, DriverError, SmClockReader
from .device_record import device_record, environment_record

GIB = 1024.0 ** 3


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


def compute_unit(backend, dtype, upcast):
    """Each backend's arithmetic as torch documents it: fused kernels on the
    tensor unit of the I/O dtype; math in fp32 when it upcasts fp16/bf16 (TF32 is
    off, so its matmuls are fp32 FMAs). fp32 I/O is judged against fp32_simt, as
    the tool judges every fp32 kernel."""
    arithmetic = "fp32_simt" if backend.name == "math" and upcast else "tensor_for_dtype"
    return figures.compute_unit_for(dtype, arithmetic)


def describe(row):
    mask = " causal" if row["causal"] else ""
    return (f"{row['kernel']} forward {row['dtype']} B={row['batch']} H={row['heads']} "
            f"N={row['seq_len']} d={row['head_dim']}{mask}")


class SweepState:
    """The report, its progress lines, and its rewrite after each row."""

    def __init__(self, report, json_path, measurable):
        self.report = report
        self.json_path = json_path
        self.measurable = measurable
        self.done = 0
        self.start = time.monotonic()

    def begin(self, row, device):
        eta = "ETA -"
        if self.done:
            elapsed = time.monotonic() - self.start
            eta = f"ETA {elapsed / self.done * (self.measurable - self.done):.0f} s"
        print(f"[{self.done + 1}/{self.measurable}] device {device}: {describe(row)} ({eta})",
              file=sys.stderr, flush=True)

    def finish(self, row):
        self.done += 1
        if row["status"] != "ok":
            print(f"    {row['status']}: {row['reason']}", file=sys.stderr, flush=True)
        elif row.get("timing"):
            check = "passed" if row["correctness"]["passed"] else "FAILED"
            print(f"    median {row['timing']['median_ms']:.4f} ms over "
                  f"{len(row['timing']['samples_ms'])} samples, check {check}",
                  file=sys.stderr, flush=True)
        self.write_partial()

    def write_partial(self):
        if self.json_path == "-":
            return
        partial = dict(self.report, provenance=dict(self.report["provenance"]))
        partial["provenance"]["auditable"] = False
        partial["provenance"]["reasons"] = partial["provenance"]["reasons"] + [
            f"incomplete: {self.done} of {self.measurable} configurations done"]
        reports.write_text_atomically(self.json_path, reports.report_text(partial))


def plan_rows(problems, backends, build_gaps, upcast, ceiling, convention, device):
    rows = []
    for problem in problems:
        for backend in backends:
            row = figures.model_row(backend.kernel, problem,
                                    compute_unit(backend, problem.dtype, upcast), ceiling,
                                    convention)
            row["device"] = device
            if row["status"] == "ok" and build_gaps[backend.name]:
                row["status"], row["reason"] = "skipped", build_gaps[backend.name]
            rows.append((problem, backend, row))
    return rows


def environment_failures(environment):
    """The peer's one condition beyond roofline/report/auditability.cpp: the software
    that produced the figures is named."""
    missing = [key for key in ("python", "torch", "torch_cuda") if not environment.get(key)]
    return [f"provenance.environment lacks {', '.join(missing)}"] if missing else []


def run_measurement(args, problems, backend_names, device, timing, table, table_origin, tool,
                    provenance, platform_module):
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
        chosen, warnings = ceilings.choose_ceiling(table, table_origin, args.gpu, args.ceiling,
                                                   [record])
    except (DriverError, ceilings.CeilingError) as error:
        print(f"torch_sdpa.py: error: {error}", file=sys.stderr)
        return 2
    for warning in warnings:
        print(f"WARNING: {warning}", file=sys.stderr)
    provenance["environment"] = environment_record(torch, platform_module)
    report = {"schema": reports.SCHEMA, "tool": tool, "provenance": provenance,
              "devices": [record], "ceiling": chosen, "results": []}

    names = backend_names or [b.name for b in BACKENDS if not missing_from_build(torch, b)]
    backends = [b for b in BACKENDS if b.name in names]
    backends.sort(key=lambda b: names.index(b.name))
    gaps = {b.name: missing_from_build(torch, b) for b in backends}
    upcast = math_upcasts(torch)
    planned = plan_rows(problems, backends, gaps, upcast, chosen, args.flop_convention, device)
    report["results"] = [row for _, _, row in planned]

    max_MHz = driver.attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE, device) / 1000.0
    clock = SmClockReader(record["pci_bus_id"])
    if not clock.available:
        print("WARNING: NVML unavailable: no SM clock per sample, no throttle test",
              file=sys.stderr)
    timer = ColdTimer(torch, driver, clock, device, timing, max_MHz, record["l2_bytes"])
    budget = (args.math_budget_gib * GIB if args.math_budget_gib is not None
              else record["memory_bytes"] / 2)
    runner = BackendRunner(torch, device, timer, args.seed, budget)
    measurable = sum(1 for _, _, row in planned if row["status"] == "ok")
    state = SweepState(report, args.json, measurable)
    notes, lost = [], ""
    with Interrupt() as interrupt:
        for problem, backend, row in planned:
            if row["status"] != "ok":
                continue
            if interrupt.requested:
                row["status"] = "skipped"
                row["reason"] = "interrupted before this configuration ran"
            elif lost:
                row["status"], row["reason"] = "failed", lost
            else:
                state.begin(row, device)
                outcome = runner.run(problem, backend)
                apply_outcome(row, outcome, chosen)
                notes += [f"{describe(row)}: {note}" for note in outcome.notes]
                if outcome.device_lost:
                    lost = f"device {device} lost after: {outcome.reason}"
            state.finish(row)
    return finish_report(report, args.json, warnings, notes, interrupt.requested)


def apply_outcome(row, outcome, ceiling):
    row["status"], row["reason"] = outcome.status, outcome.reason
    if outcome.correctness is not None:
        row["correctness"] = outcome.correctness
    if outcome.timing is not None and outcome.timing["samples_ms"]:
        row["timing"] = outcome.timing
        row["achieved"] = figures.achieved_from(row, ceiling)


def finish_report(report, json_path, warnings, notes, interrupted):
    provenance = report["provenance"]
    if interrupted:
        provenance["reasons"].append("interrupted (Ctrl-C): not every configuration ran")
    provenance["reasons"] += warnings + notes
    failures = reports.auditability_failures(report)
    failures += environment_failures(provenance["environment"])
    provenance["auditable"] = not failures and not interrupted
    provenance["reasons"] += failures
    reports.write_text_atomically(json_path, reports.report_text(report))
    counts = {s: sum(1 for r in report["results"] if r["status"] == s)
              for s in ("ok", "skipped", "failed")}
    print(f"torch_sdpa.py: {counts['ok']} ok, {counts['skipped']} skipped, {counts['failed']} "
          f"failed; auditable: {'yes' if provenance['auditable'] else 'no'}"
          + (f" ({'; '.join(failures)})" if failures else ""), file=sys.stderr)
    if interrupted:
        return 130
    return 1 if counts["failed"] else 0
