"""How llama.cpp's server is built (engine.serving.install): for a CPU baseline, not the build machine's
own instructions, and built again when an earlier build used other CPU flags."""

from __future__ import annotations

import pytest

from engine.serving import install


def test_on_x86_the_server_is_built_for_avx2_not_the_machine_s_own_instructions(monkeypatch):
    monkeypatch.setattr(install.platform, "machine", lambda: "x86_64")
    flags = install.cpu_flags()
    assert "-DGGML_NATIVE=OFF" in flags and "-DGGML_AVX2=ON" in flags
    assert not any("AVX512" in flag for flag in flags)
    monkeypatch.setattr(install.platform, "machine", lambda: "aarch64")
    assert install.cpu_flags() == ["-DGGML_NATIVE=ON"]


def test_a_server_built_with_other_cpu_flags_is_built_again(tmp_path, monkeypatch):
    monkeypatch.setenv("ASYMGAMES_HOME", str(tmp_path))
    server = install.built_server()
    server.parent.mkdir(parents=True)
    server.write_text("a server built before the flags were kept")
    monkeypatch.setattr(install.shutil, "which", lambda tool: None)  # a build stops at once, saying so
    said: list[str] = []
    with pytest.raises(install.SetupError, match="building llama-server needs cmake"):
        install.setup_server(said.append)
    install.built_flags().write_text(" ".join(install.cpu_flags()))
    assert install.setup_server(said.append) == server
    assert said == [f"llama-server: already built at {server}"]
