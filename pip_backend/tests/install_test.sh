#!/usr/bin/env bash
# ctest sdtw_pip_install / sdtw_wheel_install: installs the checkout into a fresh virtual environment
# (torch from the system site packages) with `pip install --no-build-isolation .` (pip) or through
# the wheel of `python -m build --wheel --no-isolation` (wheel), offline, reusing the configured
# build tree; then, from another directory and with no sdtw environment variable, checks the
# installed package (check_installed.py).
#   install_test.sh pip|wheel <python with torch> <build dir> <scratch dir> <CMake project version>
set -euo pipefail
how=$1 python=$2 build=$3 work=$4 version=$5
source=$(cd "$(dirname "$0")/../.." && pwd)
unset PYTHONPATH SDTW_TORCH_LIBRARY
export SDTW_BUILD_DIR=$build PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
rm -rf "$work"
mkdir -p "$work/elsewhere"
# The new environment sees what <python> sees (its own site-packages too, when it is itself a
# virtual environment: a nested venv would only see the base installation), pip included.
"$python" -m venv --system-site-packages --without-pip "$work/venv"
venv_python=$work/venv/bin/python
"$python" -c 'import site, sys; print("\n".join(site.getsitepackages() + [site.getusersitepackages()]))' \
  >"$("$venv_python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/parent.pth"
cd "$source"
case $how in
  pip) "$venv_python" -m pip install -q --no-build-isolation . ;;
  wheel)
    if ! "$venv_python" -c 'import build' 2>/dev/null; then
      echo "SKIPPED: $python has no module build (Debian: python3-build)"
      exit 0
    fi
    "$venv_python" -m build --wheel --no-isolation --outdir "$work/dist" . >"$work/build.log" 2>&1 ||
      { cat "$work/build.log"; exit 1; }
    wheels=("$work"/dist/sdtw_torch-*.whl)
    echo "wheel: $(basename "${wheels[0]}")"
    "$venv_python" -m pip install -q "${wheels[0]}"
    ;;
  *) echo "install_test.sh: unknown mode '$how' (pip or wheel)" >&2; exit 2 ;;
esac
cd "$work/elsewhere"
"$venv_python" "$source/pip_backend/tests/check_installed.py" "$version" "$work/venv"
