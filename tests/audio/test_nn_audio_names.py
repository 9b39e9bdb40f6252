"""The nn::audio names the host serves are what a C++ compiler makes of the signatures
``cpu_host/horizon/audio/nn_audio.py`` documents: clang (the ziglang wheel's) compiles the
declarations below and its object's undefined symbols are compared with the served names, and
with the ``__asm__`` names our guest header (``examples/horizon_hello/sdk/nn.h``) binds."""

from __future__ import annotations

import re
import subprocess
import sys

from elftools.elf.elffile import ELFFile

from cpu_host.horizon.audio.host import null_host
from cpu_host.horizon.audio.nn_audio import NnAudio
from tests.horizon.hz_build import ROOT

DECLS = """
#include <stddef.h>
#include <stdint.h>
namespace nn { struct Result { uint32_t v; };
namespace audio {
struct AudioRendererParameter; struct AudioRendererHandle { void *p; }; struct AudioRendererConfig;
struct FinalMixType; struct DeviceSinkType; struct MemoryPoolType; struct WaveBuffer;
struct VoiceType { enum PlayState { Started, Stopped, Paused }; }; enum SampleFormat { PcmInt16 = 2, Adpcm = 6 };
void InitializeAudioRendererParameter(AudioRendererParameter*);
size_t GetAudioRendererWorkBufferSize(const AudioRendererParameter&);
Result OpenAudioRenderer(AudioRendererHandle*, const AudioRendererParameter&, void*, size_t);
Result StartAudioRenderer(AudioRendererHandle);
void StopAudioRenderer(AudioRendererHandle);
void CloseAudioRenderer(AudioRendererHandle);
size_t GetAudioRendererConfigWorkBufferSize(const AudioRendererParameter&);
void InitializeAudioRendererConfig(AudioRendererConfig*, const AudioRendererParameter&, void*, size_t);
Result RequestUpdateAudioRenderer(AudioRendererHandle, const AudioRendererConfig*);
bool AcquireFinalMix(AudioRendererConfig*, FinalMixType*, int);
void SetFinalMixVolume(FinalMixType*, float);
Result AddDeviceSink(AudioRendererConfig*, DeviceSinkType*, FinalMixType*, const int8_t*, int, const char*);
bool AcquireMemoryPool(AudioRendererConfig*, MemoryPoolType*, void*, size_t);
bool RequestAttachMemoryPool(MemoryPoolType*);
bool AcquireVoiceSlot(AudioRendererConfig*, VoiceType*, int, int, SampleFormat, int, const void*, size_t);
void ReleaseVoiceSlot(AudioRendererConfig*, VoiceType*);
void SetVoiceDestination(AudioRendererConfig*, VoiceType*, FinalMixType*);
void SetVoiceMixVolume(VoiceType*, FinalMixType*, float, int, int);
void SetVoiceVolume(VoiceType*, float);
void SetVoicePitch(VoiceType*, float);
void SetVoicePlayState(VoiceType*, VoiceType::PlayState);
VoiceType::PlayState GetVoicePlayState(const VoiceType*);
bool AppendWaveBuffer(VoiceType*, const WaveBuffer*);
const WaveBuffer* GetReleasedWaveBuffer(VoiceType*);
int64_t GetVoicePlayedSampleCount(const VoiceType*);
}}
"""


def test_served_names_are_the_manglings_of_the_signatures(tmp_path) -> None:
    names = re.findall(r"\b(\w+)\((?:[^;]*)\);", DECLS.split("namespace audio {")[1])
    src = tmp_path / "decls.cpp"
    # take each function's address, so the object lists every name as an undefined symbol
    src.write_text(DECLS + "void *refs[] = {" + ",".join(f"(void *)&nn::audio::{n}" for n in names) + "};\n")
    obj = tmp_path / "decls.o"
    r = subprocess.run(
        [sys.executable, "-m", "ziglang", "c++", "-target", "aarch64-linux-musl", "-c", str(src), "-o", str(obj)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    with open(obj, "rb") as f:
        symtab = ELFFile(f).get_section_by_name(".symtab")
        mangled = {s.name for s in symtab.iter_symbols() if s.name.startswith("_ZN2nn5audio")}
    assert len(mangled) == len(names) == 25
    served = {f.name for f in NnAudio(null_host()).functions()}
    assert served == mangled
    header = (ROOT / "examples" / "horizon_hello" / "sdk" / "nn.h").read_text()
    assert set(re.findall(r'__asm__\("(_ZN2nn5audio\w+)"\)', header)) == mangled
