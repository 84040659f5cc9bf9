"""A report in schema `cuflash-roofline/report/v1` (docs/report-schema.md):
its text, its atomic write, and when it may say `auditable: true`.

auditability_failures ports roofline/report/auditability.cpp sentence for sentence, so
the script sets the flag exactly as `sweep` does and `audit` agrees with it.
"""

import datetime
import json
import math
import os
import socket
import sys

SCHEMA = "cuflash-roofline/report/v1"


def utc_now_iso8601():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def host_name():
    try:
        return socket.gethostname() or "unknown"
    except OSError:
        return "unknown"


def _row_label(index, row):
    mask = " causal" if row["causal"] else ""
    return (f"results[{index}] ({row['kernel']} {row['dtype']} N={row['seq_len']} "
            f"d={row['head_dim']}{mask})")


def _environment_failures(report):
    failures = []
    tool = report["tool"]
    if not tool["git_commit"] or tool["git_commit"] == "unknown":
        failures.append("the tool's git commit is unknown")
    elif tool["git_dirty"]:
        failures.append(
            f"built from a dirty tree (commit {tool['git_commit']} plus uncommitted changes)")
    provenance = report["provenance"]
    for key in ("created_utc", "command", "host"):
        if not provenance.get(key):
            failures.append(f"provenance.{key} is missing")
    if not report["devices"]:
        failures.append("no device record")
    for d in report["devices"]:
        if (not all(d[k] for k in ("name", "cc", "driver", "runtime", "pci_bus_id"))
                or d["sm_count"] <= 0 or d["memory_bytes"] <= 0 or d["clock_MHz"] <= 0):
            failures.append(f"device {d['index']} record is incomplete")
    if report["ceiling"].get("matches_device") is False:
        failures.append(f"the ceiling is {report['ceiling']['gpu']}'s, not the measuring device's")
    return failures


def auditability_failures(report):
    """Each failed condition of docs/report-schema.md#auditability, one sentence each."""
    source = report["provenance"]["source"]
    if source != "measured":
        return [f"provenance source is '{source}', not a measurement"]
    failures = _environment_failures(report)
    ok_rows = 0
    for index, row in enumerate(report["results"]):
        if row["status"] != "ok":
            continue
        ok_rows += 1
        if row.get("device") is None:
            failures.append(_row_label(index, row) + " names no device")
        if not row.get("timing") or not row["timing"]["samples_ms"]:
            failures.append(_row_label(index, row) + " has no raw samples")
        if not row.get("correctness"):
            failures.append(_row_label(index, row) + " was not checked against the reference")
        elif not row["correctness"]["passed"]:
            failures.append(_row_label(index, row) + " is ok but failed its correctness check")
    if ok_rows == 0:
        failures.append("no row was measured successfully")
    return failures


def _finite(value, where):
    """The tool's reader wants finite numbers; a NaN or Inf here is a bug."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{where}: {value} is not a finite number")
    if isinstance(value, dict):
        for key, item in value.items():
            _finite(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _finite(item, f"{where}[{index}]")


def report_text(report):
    """Keys sorted, two-space indent, as the tool's writer emits them."""
    _finite(report, "report")
    return json.dumps(report, indent=2, sort_keys=True, allow_nan=False) + "\n"


def write_text_atomically(path, text):
    """'-' is stdout. Otherwise a temporary file beside PATH, renamed over it, so a
    reader never sees half a report."""
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    temporary = f"{path}.tmp.{os.getpid()}"
    try:
        with open(temporary, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except OSError:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise
