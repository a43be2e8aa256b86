"""scripts/cpu_features.py: bfloat16 is chosen (serve_embeddings --dtype auto, train_adapter --precision auto)
only where the CPU runs it natively."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

from cpu_features import cpu_has_bf16  # noqa: E402


def test_bf16_follows_the_cpu_flags(tmp_path):
    native = tmp_path / "native"
    native.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 avx512_vnni\n\n"
                      "processor\t: 1\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 avx512_vnni\n")
    amx = tmp_path / "amx"
    amx.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 amx_bf16 amx_tile\n")
    emulated = tmp_path / "emulated"
    emulated.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_vnni\n")
    assert cpu_has_bf16(native) and cpu_has_bf16(amx)
    assert not cpu_has_bf16(emulated)
    assert not cpu_has_bf16(tmp_path / "absent")  # not Linux: keep float32


def test_serve_embeddings_imports_with_the_check():
    import serve_embeddings

    assert serve_embeddings.cpu_has_bf16 is cpu_has_bf16
