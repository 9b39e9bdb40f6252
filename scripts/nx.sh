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
  golang-1.19-go            # builds a Go PIE for arm64 at test time (the .gopclntab reader's test)
  redis-server              # relay tests: the room directory of several relays (started by the tests)
  fonts-dejavu-core         # the public font pl:u serves as the Switch's shared fonts
)

sudo_() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else "$@"; fi; }

# A mirror or index that hiccups once must not fail a whole CI run: every download is tried
# 3 times, 10 s apart (apt also retries each file itself, Acquire::Retries), then fails naming
# what could not be fetched.
retry3() {
  local what=$1; shift
  local n
  for n in 1 2 3; do
    "$@" && return 0
    [ "$n" = 3 ] || { echo "nx: $what failed (try $n of 3); again in 10 s" >&2; sleep 10; }
  done
  echo "nx: error: $what failed 3 times; see the messages above" >&2
  return 1
}

setup_apt() {
  local missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "nx: installing Debian packages: ${missing[*]}" >&2
    retry3 "apt-get update" sudo_ env DEBIAN_FRONTEND=noninteractive apt-get -o Acquire::Retries=3 update -q >/dev/null
    retry3 "apt-get install ${missing[*]}" \
      sudo_ env DEBIAN_FRONTEND=noninteractive apt-get -o Acquire::Retries=3 install -y -q "${missing[@]}" >/dev/null
  fi
}

setup_venv() {
  local py=${PYTHON:-python3}
  [ -x .venv/bin/python ] || "$py" -m venv .venv
  local stamp=.venv/.nx-installed
  if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    echo "nx: installing Python packages into .venv" >&2
    retry3 "pip install --upgrade pip" .venv/bin/python -m pip install -q --upgrade pip
    retry3 "pip install -e .[test]" .venv/bin/python -m pip install -q -e ".[test]"
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
