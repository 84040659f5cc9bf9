"""The roof a peer report is judged against, chosen as `sweep` chooses it.

Ports roofline/model/gpu_table.cpp (reading configs/gpus.json, matching a device
name), app/gpu_choice.cpp (--gpu), roofline/report/row_model.cpp datasheet_ceiling,
roofline/report/ceilings_report.cpp measured_ceiling_record (--ceiling FILE) and
app/ceiling_choice.cpp (matches_device), with the same one-line messages.
"""

import json
import math

from .figures import COMPUTE_UNITS

CEILINGS_SCHEMA = "cuflash-roofline/ceilings/v1"


class CeilingError(ValueError):
    """A table, ceilings file or --gpu choice that cannot be used; one line."""


def _require(condition, origin, gpu, field, problem):
    if not condition:
        raise CeilingError(f"{origin}: gpu '{gpu}': field '{field}' {problem}")


def _string(entry, key, origin, gpu, path):
    _require(key in entry, origin, gpu, path, "is missing")
    value = entry[key]
    _require(isinstance(value, str) and value, origin, gpu, path, "must be a non-empty string")
    return value


def _figure(entry, key, origin, gpu, path, null_allowed):
    """{"value": number > 0, "source": "document"}: (value or None, source)."""
    _require(key in entry, origin, gpu, path, "is missing")
    figure = entry[key]
    _require(isinstance(figure, dict), origin, gpu, path, "must be an object")
    _require("value" in figure, origin, gpu, f"{path}.value", "is missing")
    source = _string(figure, "source", origin, gpu, f"{path}.source")
    value = figure["value"]
    if value is None:
        _require(null_allowed, origin, gpu, f"{path}.value", "is null")
        return None, source
    _require(isinstance(value, (int, float)) and not isinstance(value, bool), origin, gpu,
             f"{path}.value", "is not a number")
    _require(math.isfinite(value) and value > 0, origin, gpu, f"{path}.value",
             "must be a positive number")
    return float(value), source


def _parse_row(row, index, origin):
    if not isinstance(row, dict):
        raise CeilingError(f"{origin}: gpus[{index}] must be an object")
    gpu = row["id"] if isinstance(row.get("id"), str) else f"#{index}"
    spec = {
        "id": _string(row, "id", origin, gpu, "id"),
        "name": _string(row, "name", origin, gpu, "name"),
        "match_names": [],
    }
    names = row.get("match_names", [])
    _require(isinstance(names, list) and all(isinstance(n, str) for n in names), origin, gpu,
             "match_names", "must be a list of strings")
    spec["match_names"] = names
    _require("compute_capability" in row, origin, gpu, "compute_capability", "is missing")
    cc = row["compute_capability"]
    _require(isinstance(cc, dict), origin, gpu, "compute_capability", "must be an object")
    spec["compute_capability"] = _string(cc, "value", origin, gpu, "compute_capability.value")
    _string(cc, "source", origin, gpu, "compute_capability.source")
    for key in ("sm_count", "l2_bytes", "shared_memory_per_sm_bytes"):
        _figure(row, key, origin, gpu, key, False)
    spec["bandwidth_GBps"], spec["bandwidth_source"] = _figure(
        row, "memory_bandwidth_GBps", origin, gpu, "memory_bandwidth_GBps", False)
    _require("peak_TFLOPs" in row, origin, gpu, "peak_TFLOPs", "is missing")
    _require(isinstance(row["peak_TFLOPs"], dict), origin, gpu, "peak_TFLOPs", "must be an object")
    spec["peak_TFLOPs"] = {
        unit: _figure(row["peak_TFLOPs"], unit, origin, gpu, f"peak_TFLOPs.{unit}", True)[0]
        for unit in COMPUTE_UNITS
    }
    return spec


def parse_gpu_table(document, origin):
    """The rows of a GPU table (configs/gpus.json's schema), checked as the tool checks them."""
    if not isinstance(document, dict):
        raise CeilingError(f"{origin}: top level must be an object")
    rows = document.get("gpus")
    if not isinstance(rows, list) or not rows:
        raise CeilingError(f"{origin}: key 'gpus' must be a non-empty list")
    table = []
    for index, row in enumerate(rows):
        spec = _parse_row(row, index, origin)
        if find_gpu(table, spec["id"]) is not None:
            raise CeilingError(f"{origin}: gpu '{spec['id']}' appears twice")
        table.append(spec)
    return table


def load_json(path):
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except OSError:
        raise CeilingError(f"{path}: cannot open (missing or unreadable)") from None
    if not text:
        raise CeilingError(f"{path}: empty file")
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise CeilingError(
            f"{path}: not valid JSON (byte {error.pos}): truncated or not a report") from None


def find_gpu(table, gpu_id):
    wanted = gpu_id.lower()
    return next((gpu for gpu in table if gpu["id"].lower() == wanted), None)


def match_device(table, device_name, compute_capability):
    """The row whose cc equals the device's and one of whose match_names occurs in
    its name (case-insensitive)."""
    name = device_name.lower()
    for gpu in table:
        if gpu["compute_capability"] != compute_capability:
            continue
        if any(fragment.lower() in name for fragment in gpu["match_names"]):
            return gpu
    return None


def choose_gpu(table, origin, requested, device):
    """app/gpu_choice.cpp: 'auto' picks the row matching `device` (name, cc)."""
    ids = ", ".join(gpu["id"] for gpu in table)
    if requested == "auto":
        match = match_device(table, device["name"], device["cc"])
        if match is None:
            raise CeilingError(
                f"--gpu auto: no row of {origin} matches '{device['name']}' (cc {device['cc']}); "
                f"name one of: {ids} or add a row with --gpu-table")
        return match
    gpu = find_gpu(table, requested)
    if gpu is None:
        raise CeilingError(f"--gpu {requested}: unknown GPU; known: {ids}, auto")
    return gpu


def datasheet_ceiling(gpu, origin):
    return {
        "gpu": gpu["id"],
        "gpu_name": gpu["name"],
        "source": "datasheet",
        "source_detail": f"{origin} (bandwidth: {gpu['bandwidth_source']})",
        "bandwidth_GBps": gpu["bandwidth_GBps"],
        "l2_bandwidth_GBps": None,  # no datasheet states one
        "peak_TFLOPs": dict(gpu["peak_TFLOPs"]),
        "matches_device": None,
    }


def measured_ceiling_record(ceilings, datasheet, origin):
    """A `ceilings` report's DRAM and L2 bandwidth and best peak per unit; what nobody
    measured keeps the datasheet figure, and source_detail says which."""
    if not isinstance(ceilings, dict) or ceilings.get("schema") != CEILINGS_SCHEMA:
        found = ceilings.get("schema") if isinstance(ceilings, dict) else None
        raise CeilingError(f"schema: expected '{CEILINGS_SCHEMA}', found '{found}'")
    try:
        device_name = ceilings["device"]["name"]
        created = ceilings["provenance"]["created_utc"]
        figures = [(f["figure"], float(f["value"]), f.get("compute_unit"))
                   for f in ceilings["figures"]]
    except (KeyError, TypeError, ValueError) as error:
        raise CeilingError(f"not a ceilings report ({type(error).__name__}: {error})") from None
    ceiling = dict(datasheet, peak_TFLOPs=dict(datasheet["peak_TFLOPs"]), source="measured")
    detail = f"{origin} (measured on {device_name}, {created})"
    dram = next((value for name, value, _ in figures if name == "dram_bandwidth"), None)
    if dram is not None:
        ceiling["bandwidth_GBps"] = dram
    else:
        detail += "; bandwidth from the datasheet"
    l2 = next((value for name, value, _ in figures if name == "l2_bandwidth"), None)
    if l2 is not None:
        ceiling["l2_bandwidth_GBps"] = l2
    for unit in COMPUTE_UNITS:
        measured = [value for _, value, figure_unit in figures if figure_unit == unit]
        if measured:
            ceiling["peak_TFLOPs"][unit] = max(measured)
        elif datasheet["peak_TFLOPs"][unit] is not None:
            detail += f"; {unit} from the datasheet"
    ceiling["source_detail"] = detail
    return ceiling


def choose_ceiling(table, origin, gpu, mode, devices):
    """app/ceiling_choice.cpp. mode: 'datasheet' or the path of a `ceilings` JSON
    ('measured' needs the tool's micro-benchmarks: run `cuflash-roofline
    ceilings --json FILE` and pass FILE). Returns (ceiling, warnings); each
    warning also belongs in provenance.reasons."""
    if not devices:
        raise CeilingError("no device to measure on")
    row = choose_gpu(table, origin, gpu, devices[0])
    if mode == "datasheet":
        ceiling = datasheet_ceiling(row, origin)
    elif mode == "measured":
        raise CeilingError(
            "--ceiling measured: this script cannot run the ceiling micro-benchmarks; run "
            "`cuflash-roofline ceilings --json FILE` on this GPU and pass --ceiling FILE")
    else:
        try:
            ceiling = measured_ceiling_record(load_json(mode), datasheet_ceiling(row, origin),
                                              mode)
        except CeilingError as error:
            message = str(error)
            raise CeilingError(
                message if message.startswith(mode) else f"--ceiling {mode}: {message}") from None
    warnings = []
    for device in devices:
        if match_device(table, device["name"], device["cc"]) is not row:
            warnings.append(
                f"ceiling '{row['id']}' ({row['name']}) is not the measuring device's: device "
                f"{device['index']} is {device['name']} (cc {device['cc']}); every fraction of "
                "roof compares this device with another GPU's ceiling")
    ceiling["matches_device"] = not warnings
    return ceiling, warnings
