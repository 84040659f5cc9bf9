"""The raw samples document (schema cuflash-roofline/raw-samples/v1,
docs/peers.md): what was measured and nothing derived from it. `import-samples`
reads it (roofline/evidence/raw_samples.hpp) and computes every figure.
Runs without torch.
"""

import datetime
import json
import math
import os
import socket

SCHEMA = "cuflash-roofline/raw-samples/v1"


def utc_now_iso8601():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def host_name():
    try:
        return socket.gethostname() or "unknown"
    except OSError:
        return "unknown"


def provenance(command, environment=None):
    """When and where the run began; the environment is added once torch is loaded."""
    return {"created_utc": utc_now_iso8601(), "command": command, "host": host_name(),
            "environment": environment or {}, "reasons": [], "finished": True}


def document(tool, provenance_record, devices, backends, rows):
    """backends: [{"kernel", "arithmetic"}]; rows: row() objects, in order."""
    return {"schema": SCHEMA, "tool": tool, "provenance": provenance_record,
            "devices": devices, "backends": backends, "results": rows}


def row(kernel, problem, device, status="ok", reason="", direction="forward"):
    """One configuration; an ok row gets its `check` and `timing` once measured.
    A backward row says so ("direction"); a forward row has no such key, as
    every file written before it."""
    out = {"kernel": kernel, "problem": problem.record, "device": device, "status": status,
           "reason": reason}
    if direction != "forward":
        out["direction"] = direction
    return out


def unfinished(raw, reason):
    """A copy of `raw` saying the run did not finish, and why."""
    copy = dict(raw, provenance=dict(raw["provenance"]))
    copy["provenance"]["finished"] = False
    copy["provenance"]["reasons"] = raw["provenance"]["reasons"] + [reason]
    return copy


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


def text(raw):
    """Keys sorted, two-space indent, as the tool writes its documents."""
    _finite(raw, "raw samples")
    return json.dumps(raw, indent=2, sort_keys=True, allow_nan=False) + "\n"


def write_atomically(path, content):
    """A temporary file beside PATH, renamed over it, so a reader never sees
    half a document."""
    temporary = f"{path}.tmp.{os.getpid()}"
    try:
        with open(temporary, "w", encoding="utf-8") as file:
            file.write(content)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except OSError:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise
