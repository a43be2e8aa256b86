"""What this CPU computes natively, read from /proc/cpuinfo (Linux; elsewhere nothing is claimed).

Shared by the scripts that choose a precision for it: train_adapter.py (`--precision auto`) and
serve_embeddings.py (`--dtype auto`)."""

from __future__ import annotations

from pathlib import Path


def cpu_has_bf16(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """True where the CPU has native bfloat16 (AVX512-BF16 or AMX); False without it or without `cpuinfo`."""
    try:
        flags = cpuinfo.read_text()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags
