import hashlib

import pytest

from components.model_files import PRESETS, GGUFPreset, ModelFileError, gguf_path


@pytest.fixture
def chunked_preset(tmp_path, monkeypatch):
    """A preset whose chunks live in two throwaway packages on sys.path."""
    chunks = [b"GGUF" + b"a" * 96, b"b" * 50]
    for number, data in enumerate(chunks, start=1):
        package = tmp_path / "site" / f"fake_model_part{number}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "data" / f"part{number:02d}.bin").write_bytes(data)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setenv("ADAPTIVE_RAG_CACHE", str(tmp_path / "cache"))
    whole = b"".join(chunks)
    preset = GGUFPreset("fake", "test", ("fake_model_part1", "fake_model_part2"), "fake.gguf",
                        len(whole), hashlib.sha256(whole).hexdigest(), "fake")
    monkeypatch.setitem(PRESETS, "fake", preset)
    return preset, whole


class TestGGUFAssembly:
    def test_assembles_verifies_and_reuses(self, chunked_preset, tmp_path):
        preset, whole = chunked_preset
        path = gguf_path("fake")
        assert path == tmp_path / "cache" / "fake.gguf" and path.read_bytes() == whole
        mtime = path.stat().st_mtime_ns
        assert gguf_path("fake").stat().st_mtime_ns == mtime  # reused, not rebuilt

    def test_wrong_checksum_leaves_nothing(self, chunked_preset, monkeypatch, tmp_path):
        preset, _ = chunked_preset
        monkeypatch.setitem(PRESETS, "fake", GGUFPreset(**{**preset.__dict__, "sha256": "0" * 64}))
        with pytest.raises(ModelFileError, match="sha256"):
            gguf_path("fake")
        assert not (tmp_path / "cache" / "fake.gguf").exists()

    def test_wrong_size(self, chunked_preset, monkeypatch):
        preset, _ = chunked_preset
        monkeypatch.setitem(PRESETS, "fake", GGUFPreset(**{**preset.__dict__, "size": 5}))
        with pytest.raises(ModelFileError, match="add up to"):
            gguf_path("fake")

    def test_missing_package_names_the_install(self, monkeypatch):
        preset = GGUFPreset("ghost", "x", ("no_such_pkg_part1", "no_such_pkg_part2"), "g.gguf", 1, "0", "ghost-extra")
        monkeypatch.setitem(PRESETS, "ghost", preset)
        with pytest.raises(ModelFileError, match=r"adaptive-rag\[ghost-extra\]"):
            gguf_path("ghost")

    def test_unknown_preset_lists_valid(self):
        with pytest.raises(ModelFileError, match="valid presets: qwen2.5-coder-1.5b"):
            gguf_path("gpt-5")

    def test_bundled_smollm2_verifies(self):
        assert gguf_path("smollm2-135m").stat().st_size == PRESETS["smollm2-135m"].size
