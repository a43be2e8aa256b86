"""scripts/serve_embeddings.py picks bfloat16 only where the CPU runs it natively."""

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "serve_embeddings.py"


def _script():
    spec = importlib.util.spec_from_file_location("serve_embeddings", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_auto_dtype_follows_the_cpu_flags(tmp_path):
    serve = _script()
    native = tmp_path / "native"
    native.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 avx512_vnni\n\n"
                      "processor\t: 1\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 avx512_vnni\n")
    emulated = tmp_path / "emulated"
    emulated.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_vnni\n")
    assert serve.auto_dtype(native) == "bfloat16"
    assert serve.auto_dtype(emulated) == "float32"
    assert serve.auto_dtype(tmp_path / "absent") == "float32"  # not Linux: keep float32
