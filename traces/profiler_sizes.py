"""Sizes in a profile: element counts, tensor shapes and dtype names to bytes.

A collective's size comes from its kernel's or op's ``In msg nelems`` and
``dtype``, else from its op's ``Input Dims`` and ``Input type`` (recorded with
``record_shapes=True``). Counts are checked, so a damaged file cannot claim a
buffer no machine holds.
"""

from __future__ import annotations

from typing import Any

from .profiler_read import ProfileError

MAX_ELEMENTS = 2**48  # one collective's elements; more is not a real buffer

DTYPE_BYTES = {
    # c10 ScalarType names (NCCL kernels' and record_param_comms' "dtype")...
    "float": 4, "double": 8, "half": 2, "bfloat16": 2, "int": 4, "long": 8, "short": 2,
    "char": 1, "byte": 1, "bool": 1, "complexfloat": 8, "complexdouble": 16,
    "complexhalf": 4, "float8_e4m3fn": 1, "float8_e5m2": 1, "float8_e4m3fnuz": 1,
    "float8_e5m2fnuz": 1, "uint16": 2, "uint32": 4, "uint64": 8,
    # ...and the C++ names of ops' "Input type" (gloo:*, c10d::*)
    "c10::half": 2, "c10::bfloat16": 2, "long int": 8, "signed char": 1,
    "unsigned char": 1, "c10::complex<float>": 8, "c10::complex<double>": 16,
    "float32": 4, "float64": 8, "float16": 2, "int32": 4, "int64": 8, "int16": 2,
    "int8": 1, "uint8": 1,
}  # fmt: skip


def dtype_bytes(dtype: str) -> int | None:
    """Bytes per element of a profiler's dtype name (``Float``, ``c10::Half``...), or None."""
    return DTYPE_BYTES.get(dtype.strip().lower())


def element_count(value: Any, name: str, what: str) -> int | None:
    """A count from the file (an int or digit string), None when absent; refused if implausible."""
    if value is None or value == "":
        return None
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) < 20:
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_ELEMENTS:
        raise ProfileError(f"{name}: {what} {str(value)[:30]!r} is not a plausible element count")
    return value


def dims_elements(dims: Any, name: str) -> int | None:
    """Elements of the first tensor (or tensor list) in an op's ``Input Dims``."""
    if not isinstance(dims, list) or not dims:
        return None
    first = dims[0]
    tensors = first if first and all(isinstance(d, list) for d in first) else [first]
    total = 0
    for shape in tensors:
        if not isinstance(shape, list):
            return None
        n = 1
        for d in shape:
            d = element_count(d, name, "a tensor dimension")
            if d is None:
                return None
            n *= d
            if n > MAX_ELEMENTS:
                raise ProfileError(f"{name}: a tensor of more than {MAX_ELEMENTS} elements")
        total += n
    return total


def first_type(types: Any) -> str | None:
    """The first tensor dtype in an op's ``Input type`` list."""
    if isinstance(types, list):
        for t in types:
            if isinstance(t, str) and t and t != "TensorList":
                return t
    return None


def collective_bytes(elements: int | None, dtype: str | None, name: str, what: str) -> int | None:
    """``elements`` x the dtype's size; None when either is unknown; an unknown dtype is refused."""
    if elements is None or dtype is None:
        return None
    size = dtype_bytes(dtype)
    if size is None:
        raise ProfileError(
            f"{name}: {what} has dtype {dtype[:40]!r}, whose size this import does not know"
        )
    return elements * size


def sizes_from_enclosing(launches: list[tuple], ops: list[tuple]) -> list[tuple]:
    """``launches`` (sorted by start), each without a size given the size of the op around it.

    Both are collective op tuples (kind, start, end, id, elements, dtype); an op of
    the same kind whose range holds the launch's start encloses it (``c10d::allreduce_``
    around ``nccl:all_reduce``).
    """
    if not ops or all(launch[4] is not None for launch in launches):
        return launches
    out = []
    k = 0
    open_ops: list[tuple] = []
    for launch in launches:
        while k < len(ops) and ops[k][1] <= launch[1]:
            open_ops.append(ops[k])
            k += 1
        open_ops = [op for op in open_ops if op[2] >= launch[1]]
        if launch[4] is None:
            around = next(
                (op for op in reversed(open_ops) if op[0] == launch[0] and op[4] is not None),
                None,
            )
            if around is not None:
                launch = (*launch[:4], around[4], around[5])
        out.append(launch)
    return out
