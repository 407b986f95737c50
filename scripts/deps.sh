#!/usr/bin/env bash
# Checks what the build and the tests need by capability, not by package name: a C++17 compiler,
# CMake >= 3.24, ninja, the C++ libraries as CMake finds them (Eigen, GoogleTest, Google Benchmark,
# RapidCheck, yaml-cpp, CLI11, nlohmann-json, LibTorch), a Python with torch and the modules the
# tests and the paper use. pip's torch, a newer CMake or a library built by hand count as present.
# What is missing is installed from Debian with apt when running as root with apt (a working torch
# is never replaced); otherwise, or when apt fails, the missing parts are listed with what provides them.
#   scripts/deps.sh [test]     everything the test suite needs (scripts/test.sh)
#   scripts/deps.sh run        what building and running sdtw-bench needs (scripts/run.sh); missing
#                              Google Benchmark and RapidCheck only skip their tests, by name
#   scripts/deps.sh --check    install nothing, only report
# Exit status 1 when a required part is still missing. SDTW_PYTHON=path picks the Python.
set -euo pipefail
mode=test
check_only=0
for arg in "$@"; do
  case $arg in
    run | test) mode=$arg ;;
    --check) check_only=1 ;;
    *) echo "sdtw: deps.sh: unknown argument '$arg' (expected run, test or --check)" >&2; exit 2 ;;
  esac
done

# Python modules of the tests, the notebooks and the pip-install tests, with their Debian packages.
python_modules=(pytest numpy pandas matplotlib yaml nbformat nbconvert ipykernel pip build)
declare -A debian_module=([torch]=python3-torch [pytest]=python3-pytest [numpy]=python3-numpy
  [pandas]=python3-pandas [matplotlib]=python3-matplotlib [yaml]=python3-yaml [nbformat]=python3-nbformat
  [nbconvert]=python3-nbconvert [ipykernel]=python3-ipykernel [pip]=python3-pip
  [build]=python3-build)
declare -A pip_module=([yaml]=pyyaml)

missing=()   # "what|Debian package|required or optional"
found=()

# need <what> <Debian package> <needed by run: required|optional|no>: records a missing part.
need() {
  local level=$3
  if [ "$mode" = test ]; then
    level=required
  elif [ "$level" = no ]; then
    return
  fi
  missing+=("$1|$2|$level")
}

pick_python() {
  local candidates=() p
  if [ -n "${SDTW_PYTHON:-}" ]; then
    candidates=("$SDTW_PYTHON")
  else
    [ -x /usr/bin/python3 ] && candidates+=(/usr/bin/python3)
    p=$(command -v python3 || true)
    [ -n "$p" ] && candidates+=("$p")
  fi
  python=""
  for p in "${candidates[@]}"; do
    # From / and through torch.utils: no folder of the working directory can pass for torch.
    if (cd / && "$p" -c 'import torch.utils') >/dev/null 2>&1; then
      python=$p
      return
    fi
  done
  [ ${#candidates[@]} -gt 0 ] && python=${candidates[0]}
  return 0
}

# One CMake project that looks for every C++ library as the build does (QUIET: none is fatal).
probe_cmake_packages() {
  local dir generator=()
  dir=$(mktemp -d)
  cat >"$dir/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.16)
project(sdtw_deps_probe LANGUAGES CXX)
foreach(package Eigen3 GTest benchmark rapidcheck yaml-cpp CLI11 nlohmann_json)
  find_package(${package} QUIET)
  message(STATUS "sdtw-probe ${package} ${${package}_FOUND}")
endforeach()
if(SDTW_PROBE_TORCH)
  find_package(Torch QUIET)
  message(STATUS "sdtw-probe Torch ${Torch_FOUND}")
endif()
CMAKE
  command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
  cmake -S "$dir" -B "$dir/build" "${generator[@]}" -DSDTW_PROBE_TORCH="$1" 2>&1 | sed -n 's/^-- sdtw-probe //p' || true
  rm -rf "$dir"
}

detect() {
  missing=()
  found=()
  local cxx="" c v
  for c in ${CXX:-} c++ g++ clang++; do
    if command -v "$c" >/dev/null 2>&1 &&
      echo 'int main() { if constexpr (sizeof(int) > 0) { return 0; } }' | "$c" -std=c++17 -x c++ - -o /dev/null 2>/dev/null; then
      cxx=$c
      break
    fi
  done
  [ -n "$cxx" ] && found+=("C++17 compiler ($cxx)") || need "a C++17 compiler" g++ required

  if command -v cmake >/dev/null 2>&1; then
    v=$(cmake --version | head -1 | awk '{print $3}')
    if [ "$(printf '%s\n' 3.24 "$v" | sort -V | head -1)" = 3.24 ]; then
      found+=("CMake $v")
    else
      need "CMake >= 3.24 (found $v)" cmake required
    fi
  else
    need "CMake >= 3.24" cmake required
  fi
  if command -v ninja >/dev/null 2>&1; then found+=("ninja"); else need ninja ninja-build required; fi

  pick_python
  local torch_prefix="" module
  local python_missing=() debian_python=0
  if [ -n "$python" ]; then
    torch_prefix=$(cd / && "$python" -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null || true)
    # apt's Python packages help only a Python that sees Debian's dist-packages.
    "$python" -c 'import sys; sys.exit("/usr/lib/python3/dist-packages" not in sys.path)' 2>/dev/null && debian_python=1
    if [ -n "$torch_prefix" ]; then
      found+=("torch in $python")
    else
      python_missing+=(torch)
    fi
    # shellcheck disable=SC2207
    # From / so that a folder of the checkout (build/) is not taken for a module.
    python_missing+=($(cd / && "$python" - "${python_modules[@]}" <<'PY'
import importlib.util, sys
print(" ".join(m for m in sys.argv[1:] if importlib.util.find_spec(m) is None))
PY
    ))
  else
    python_missing=(torch "${python_modules[@]}")
  fi
  for module in ${python_missing[@]+"${python_missing[@]}"}; do
    local level=no
    [ "$module" = torch ] && level=optional
    if [ -z "$python" ] || [ $debian_python = 1 ]; then
      need "Python module $module" "${debian_module[$module]}" $level
    else
      need "Python module $module in $python (pip install ${pip_module[$module]:-$module})" "" $level
    fi
  done

  # LibTorch: pip's torch carries its CMake package; otherwise CMake must find one (Debian's libtorch-dev).
  local probe_torch=ON
  if [ -n "$torch_prefix" ] && [ -f "$torch_prefix/Torch/TorchConfig.cmake" ]; then
    probe_torch=OFF
    found+=("LibTorch ($torch_prefix)")
  fi
  local probe=""
  command -v cmake >/dev/null 2>&1 && [ -n "$cxx" ] && probe=$(CXX=$cxx probe_cmake_packages $probe_torch)
  local package debian level
  for package in Eigen3:libeigen3-dev:required GTest:libgtest-dev:required benchmark:libbenchmark-dev:optional \
    rapidcheck:librapidcheck-dev:optional yaml-cpp:libyaml-cpp-dev:required CLI11:libcli11-dev:required \
    nlohmann_json:nlohmann-json3-dev:required Torch:libtorch-dev:required; do
    IFS=: read -r name debian level <<<"$package"
    [ "$name" = Torch ] && [ $probe_torch = OFF ] && continue
    if grep -Eq "^$name (1|ON|TRUE|YES)$" <<<"$probe"; then
      found+=("$name")
    else
      need "CMake package $name" "$debian" "$level"
    fi
  done
}

# packages <level>...: the Debian packages of the missing parts at those levels, once each.
packages() {
  local entry what debian level
  for entry in ${missing[@]+"${missing[@]}"}; do
    IFS='|' read -r what debian level <<<"$entry"
    for wanted in "$@"; do
      [ "$level" = "$wanted" ] && [ -n "$debian" ] && echo "$debian"
    done
  done | sort -u
}

detect
if [ ${#missing[@]} -gt 0 ] && [ $check_only = 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  mapfile -t to_install < <(packages required)  # `run` does without the optional parts
  if [ ${#to_install[@]} -gt 0 ]; then
    echo "sdtw: installing ${to_install[*]}"
    export DEBIAN_FRONTEND=noninteractive
    if apt-get update -qq && apt-get install -y -qq --no-install-recommends "${to_install[@]}" >/dev/null; then
      detect
    else
      echo "sdtw: apt-get failed (no network?); going on with what is here" >&2
    fi
  fi
fi

status=0
for entry in ${missing[@]+"${missing[@]}"}; do
  IFS='|' read -r what debian level <<<"$entry"
  provider=${debian:+ (Debian/Ubuntu package $debian)}
  if [ "$level" = required ]; then
    echo "sdtw: missing: $what$provider" >&2
    status=1
  else
    echo "sdtw: missing (its tests are skipped): $what$provider" >&2
  fi
done
if [ $status = 1 ]; then
  mapfile -t to_install < <(packages required)
  if [ ${#to_install[@]} -gt 0 ]; then
    echo "sdtw: install them with: sudo apt-get install ${to_install[*]}" >&2
  fi
  exit 1
fi
echo "sdtw: dependencies present for '$mode' (${found[*]})"
