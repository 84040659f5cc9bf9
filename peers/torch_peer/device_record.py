"""The report's device record, with every key and meaning of the tool's
(kernels/measure/device_info.cpp, app/device_record.cpp): torch's device
properties, the driver's attributes, and the kernel module's version from
/proc/driver/nvidia/version or, where that file is hidden (a sandboxed
driver), from nvidia-smi.
"""

import subprocess

from .cuda_driver import (CU_DEVICE_ATTRIBUTE_CLOCK_RATE, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)


def kernel_module_version_from_proc():
    """The first token after 'Module' on the file's first line, as the tool reads it."""
    try:
        with open("/proc/driver/nvidia/version", encoding="utf-8") as file:
            words = file.readline().split()
    except OSError:
        return ""
    if "Module" in words:
        index = words.index("Module")
        if index + 1 < len(words) and "." in words[index + 1]:
            return words[index + 1]
    return ""


def kernel_module_version_from_smi(pci_bus_id):
    try:
        result = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader",
             "-i", pci_bus_id], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    version = result.stdout.strip()
    return version if result.returncode == 0 and "." in version else ""


def device_record(torch, driver, index):
    properties = torch.cuda.get_device_properties(index)
    pci_bus_id = driver.pci_bus_id(index)
    module = kernel_module_version_from_proc() or kernel_module_version_from_smi(pci_bus_id)
    driver_text = driver.driver_version() + (f" ({module})" if module else "")
    return {
        "index": index,
        "name": properties.name,
        "cc": f"{properties.major}.{properties.minor}",
        "sm_count": properties.multi_processor_count,
        "l2_bytes": float(properties.L2_cache_size),
        "memory_bytes": float(properties.total_memory),
        "clock_MHz": driver.attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE, index) / 1000.0,
        "memory_clock_MHz": driver.attribute(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, index) / 1000.0,
        "driver": driver_text,
        # The CUDA runtime torch was built with and ships (cudaRuntimeGetVersion's figure).
        "runtime": torch.version.cuda or "",
        "pci_bus_id": pci_bus_id,
    }


def environment_record(torch, platform_module):
    """provenance.environment: the software that produced the figures."""
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    if cudnn and cudnn >= 90000:
        # cuDNN 9 encodes major*10000 + minor*100 + patch: 91002 is 9.10.2.
        cudnn_text = f"{cudnn // 10000}.{(cudnn % 10000) // 100}.{cudnn % 100} ({cudnn})"
    elif cudnn:
        # cuDNN 8 and older: major*1000 + minor*100 + patch.
        cudnn_text = f"{cudnn // 1000}.{(cudnn % 1000) // 100}.{cudnn % 100} ({cudnn})"
    else:
        cudnn_text = "none"
    return {
        "python": platform_module.python_version(),
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda or "none",
        "cudnn": cudnn_text,
    }
