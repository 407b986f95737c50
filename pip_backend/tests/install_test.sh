#!/usr/bin/env bash
# ctest sdtw_pip_install / sdtw_wheel_install: the README's install commands (Install, Debian's torch),
# offline and reusing the configured build tree: a fresh virtual environment with the system site
# packages, activated, then `pip install --no-build-isolation .` (pip) or the wheel of
# `python -m build --wheel --no-isolation` (wheel); then, from another directory and with no sdtw
# environment variable, checks the installed package (check_installed.py).
#   install_test.sh pip|wheel <python with torch> <build dir> <scratch dir> <CMake project version>
set -euo pipefail
how=$1 python=$2 build=$3 work=$4 version=$5
source=$(cd "$(dirname "$0")/../.." && pwd)
unset PYTHONPATH SDTW_TORCH_LIBRARY
export SDTW_BUILD_DIR=$build PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
rm -rf "$work"
mkdir -p "$work/elsewhere"
# The new environment sees what <python> sees (its own site-packages too, when it is itself a
# virtual environment: a nested venv would only see the base installation).
"$python" -m venv --system-site-packages "$work/venv"
"$python" -c 'import site, sys; print("\n".join(site.getsitepackages() + [site.getusersitepackages()]))' \
  >"$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/parent.pth"
# shellcheck source=/dev/null
. "$work/venv/bin/activate"
cd "$source"
case $how in
  pip) pip install --no-build-isolation . ;;
  wheel)
    if ! python -c 'import build' 2>/dev/null; then
      echo "SKIPPED: $python has no module build (Debian: python3-build)"
      exit 0
    fi
    python -m build --wheel --no-isolation --outdir "$work/dist" . >"$work/build.log" 2>&1 ||
      { cat "$work/build.log"; exit 1; }
    wheels=("$work"/dist/sdtw_torch-*.whl)
    echo "wheel: $(basename "${wheels[0]}")"
    pip install "${wheels[0]}"
    ;;
  *) echo "install_test.sh: unknown mode '$how' (pip or wheel)" >&2; exit 2 ;;
esac
cd "$work/elsewhere"
python -c "import sdtw_torch; print(sdtw_torch.__version__)"
python "$source/pip_backend/tests/check_installed.py" "$version" "$work/venv"
