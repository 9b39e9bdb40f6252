#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine:
#   bash scripts/nx.sh run   [ARGS...]  set up, then run the main job (nxrecomp demo ARGS)
#   bash scripts/nx.sh test  [PYTEST ARGS...]  set up, then run the test suite
#   bash scripts/nx.sh setup            set up only
# Setup is idempotent: Debian packages (apt, needs root or sudo), a venv in .venv with the
# pinned Python packages, the generated gRPC stubs.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
cmd=${1:-run}; shift || true

APT_PACKAGES=(
  qemu-user                 # qemu-aarch64: oracle for whole programs
  mesa-vulkan-drivers libvulkan1 vulkan-tools   # lavapipe: Vulkan on the CPU
  spirv-tools glslang-tools # spirv-val / spirv-dis
  vulkan-validationlayers   # Khronos validation: tests that run the GPU process under it
  xvfb xauth                # a virtual display for window tests
  x11-apps x11-utils xdotool # window tests: xwd captures, xwininfo finds, xdotool types (XTEST)
  cmake ninja-build dpkg-dev libx11-dev libxext-dev   # SDL3 built from Debian's source (gpu_host/sdl3_build.py)
  python3-venv python3-dev build-essential
  liblz4-1                  # reference LZ4 through ctypes: the oracle of our codec in tests
  chromium                  # report tests open report.html in headless Chromium
  redis-server              # relay tests: the room directory of several relays (started by the tests)
  fonts-dejavu-core         # the public font pl:u serves as the Switch's shared fonts
)

sudo_() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else "$@"; fi; }

setup_apt() {
  local missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "nx: installing Debian packages: ${missing[*]}" >&2
    sudo_ env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
    sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
  fi
}

setup_venv() {
  local py=${PYTHON:-python3}
  [ -x .venv/bin/python ] || "$py" -m venv .venv
  local stamp=.venv/.nx-installed
  if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    echo "nx: installing Python packages into .venv" >&2
    .venv/bin/python -m pip install -q --upgrade pip
    .venv/bin/python -m pip install -q -e ".[test]"
    touch "$stamp"
  fi
  .venv/bin/python -m proto.gen
}

setup() { setup_apt; setup_venv; }

case "$cmd" in
  setup) setup ;;
  run)   setup
         # with a display the demo plays in a window: SDL3 (built once from Debian's source, cached)
         if [ -n "${DISPLAY:-}" ]; then .venv/bin/nxrecomp build-sdl3 || echo "nx: no SDL3: playing headless" >&2; fi
         exec .venv/bin/nxrecomp demo "$@" ;;
  test)  setup; exec .venv/bin/python -m pytest -n 2 "$@" ;;
  *) echo "usage: $0 run|test|setup [ARGS...]" >&2; exit 2 ;;
esac
