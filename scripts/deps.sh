#!/usr/bin/env bash
# Installs the Debian packages the build and the tests need, when any is missing (needs root).
set -euo pipefail
packages=(cmake ninja-build g++ libeigen3-dev libgtest-dev googletest libbenchmark-dev librapidcheck-dev
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libtorch-dev python3-torch python3-pytest python3-numpy
  python3-pandas python3-matplotlib python3-yaml python3-nbformat python3-nbconvert python3-ipykernel)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "sdtw: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "sdtw: missing packages and not root; run: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
