"""The CUDA driver and NVML through ctypes, for the facts torch does not expose.

The tool reads the max SM clock and the memory clock with cudaDeviceGetAttribute
(cudaDevAttrClockRate, cudaDevAttrMemoryClockRate) and flushes L2 with
cudaMemsetAsync; the runtime answers those from the driver, so the same driver
calls give the same facts and the same flush. libcuda is loaded wherever torch
runs on a GPU; NVML (libnvidia-ml) is optional and only reads the SM clock.
"""

import ctypes

# CUdevice_attribute values (cuda.h); all in kHz or bytes.
CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13
CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36
CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38
NVML_CLOCK_SM = 1


class DriverError(RuntimeError):
    pass


class CudaDriver:
    """Driver API calls on the context torch made current (its primary context)."""

    def __init__(self):
        try:
            self._lib = ctypes.CDLL("libcuda.so.1")
        except OSError as error:
            raise DriverError(f"libcuda.so.1: {error}") from None
        self._lib.cuMemsetD8Async.argtypes = [ctypes.c_uint64, ctypes.c_ubyte, ctypes.c_size_t,
                                              ctypes.c_void_p]
        self._check(self._lib.cuInit(0), "cuInit")

    def _check(self, code, call):
        if code != 0:
            name = ctypes.c_char_p()
            self._lib.cuGetErrorName(code, ctypes.byref(name))
            text = name.value.decode() if name.value else f"CUresult {code}"
            raise DriverError(f"{call}: {text}")

    def _device(self, ordinal):
        device = ctypes.c_int()
        self._check(self._lib.cuDeviceGet(ctypes.byref(device), ordinal), "cuDeviceGet")
        return device

    def attribute(self, attribute, ordinal):
        value = ctypes.c_int()
        self._check(self._lib.cuDeviceGetAttribute(ctypes.byref(value), attribute,
                                                   self._device(ordinal)),
                    f"cuDeviceGetAttribute({attribute})")
        return value.value

    def driver_version(self):
        """13000 -> '13.0', as the tool prints cudaDriverGetVersion."""
        version = ctypes.c_int()
        self._check(self._lib.cuDriverGetVersion(ctypes.byref(version)), "cuDriverGetVersion")
        return f"{version.value // 1000}.{(version.value % 1000) // 10}"

    def pci_bus_id(self, ordinal):
        buffer = ctypes.create_string_buffer(32)
        self._check(self._lib.cuDeviceGetPCIBusId(buffer, len(buffer), self._device(ordinal)),
                    "cuDeviceGetPCIBusId")
        return buffer.value.decode()

    def memset_async(self, pointer, byte, count, stream_handle):
        """cudaMemsetAsync's driver call: `count` bytes of `byte` at `pointer`."""
        self._check(self._lib.cuMemsetD8Async(pointer, byte, count, stream_handle),
                    "cuMemsetD8Async")


class SmClockReader:
    """The SM clock NVML reports now, in MHz; 0 where NVML is absent or fails (the
    timer then cannot call a sample throttled, as when the tool's probe reads
    nothing)."""

    def __init__(self, pci_bus_id):
        self._lib = None
        self._handle = ctypes.c_void_p()
        try:
            lib = ctypes.CDLL("libnvidia-ml.so.1")
            if lib.nvmlInit_v2() != 0:
                return
            if lib.nvmlDeviceGetHandleByPciBusId_v2(pci_bus_id.encode(),
                                                    ctypes.byref(self._handle)) != 0:
                return
            self._lib = lib
        except (OSError, AttributeError):
            self._lib = None

    @property
    def available(self):
        return self._lib is not None

    def MHz(self):
        if self._lib is None:
            return 0.0
        clock = ctypes.c_uint()
        if self._lib.nvmlDeviceGetClockInfo(self._handle, NVML_CLOCK_SM, ctypes.byref(clock)):
            return 0.0
        return float(clock.value)
