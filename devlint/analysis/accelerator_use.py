"""Words and literals that name an accelerator or the CPU."""

from __future__ import annotations

import re

import libcst as cst

from devlint.analysis.guards import device_type_of_string, string_value
from devlint.analysis.torchapi import ACCELERATOR_TYPES
from devlint.names import ImportTable

_WORDS = frozenset({"cuda", "gpu", "gpus", "mps", "xpu", "accelerator", "accel", "hpu", "npu", "tpu", "xla", "nccl", "rank"})
_PARTS = re.compile(r"[a-z]+")


def names_accelerator(identifier: str) -> bool:
    """Whole words only: `use_cuda`, `ngpu`... but not `input` (npu) or `output` (tpu)."""
    lowered = identifier.lower()
    return any(part in _WORDS or part in ("ngpu", "cudnn") for part in _PARTS.findall(lowered.replace("_", " ")))


def string_names_accelerator(value: str) -> bool:
    return device_type_of_string(value) in ACCELERATOR_TYPES or any(
        part in ACCELERATOR_TYPES for part in re.split(r"[^a-z]+", value.lower()) if part
    ) and len(value) < 40


def is_cpu_device(expr: cst.BaseExpression, names: ImportTable) -> bool:
    """`"cpu"`, `"cpu:0"` or `torch.device("cpu")` written out."""
    value = string_value(expr)
    if value is not None:
        return device_type_of_string(value) == "cpu"
    if isinstance(expr, cst.Call) and names.qualify(expr.func) == "torch.device" and expr.args:
        return is_cpu_device(expr.args[0].value, names)
    return False
