#!/usr/bin/env bash
# ctest sdtw_deps_detection: scripts/deps.sh on this machine and on machines faked through PATH:
# apt-get and id are stubs that log, cmake is wrapped to report an old version or to hide a
# package, and a Python wrapper hides torch. Checks what it installs, lists and exits with.
set -euo pipefail
deps=$(cd "$(dirname "$0")/.." && pwd)/deps.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
real_cmake=$(command -v cmake)
failures=0

# fake <uid> [cmake mode]: a PATH folder with id printing <uid>, apt-get logging its arguments and
# cmake reporting version 3.20.0 (old) or not finding RapidCheck (no-rapidcheck).
fake() {
  local bin=$work/bin-$1-${2:-real}
  mkdir -p "$bin"
  printf '#!/bin/sh\necho %s\n' "$1" >"$bin/id"
  printf '#!/bin/sh\necho "$*" >>%s/apt.log\n' "$work" >"$bin/apt-get"
  case ${2:-real} in
    old) printf '#!/bin/sh\n[ "$1" = --version ] && { echo "cmake version 3.20.0"; exit 0; }\nexec %s "$@"\n' "$real_cmake" >"$bin/cmake" ;;
    no-rapidcheck) printf '#!/bin/sh\n[ "$1" = -S ] && exec %s "$@" -DCMAKE_DISABLE_FIND_PACKAGE_rapidcheck=ON\nexec %s "$@"\n' "$real_cmake" "$real_cmake" >"$bin/cmake" ;;
  esac
  chmod +x "$bin"/*
  echo "$bin:$PATH"
}

# expect <name> <exit status> <pattern the apt log must match, or "none"> <pattern in the output, or "">
# -- <environment assignments and deps.sh arguments>
expect() {
  local name=$1 want_rc=$2 want_apt=$3 want_out=$4 rc=0
  shift 5
  rm -f "$work/apt.log"
  env "$@" >"$work/out" 2>&1 || rc=$?
  local apt=none
  [ -f "$work/apt.log" ] && apt=$(grep install "$work/apt.log" || true)
  if [ "$rc" != "$want_rc" ] || ! grep -Eq -- "^$want_apt\$" <<<"$apt" ||
    { [ -n "$want_out" ] && ! grep -Eq -- "$want_out" "$work/out"; }; then
    echo "FAIL $name: exit $rc (want $want_rc), apt: '$apt' (want '$want_apt'), output:"
    sed 's/^/  /' "$work/out"
    failures=$((failures + 1))
  else
    echo "ok   $name"
  fi
}

# The faked machines start from this one: it must have everything (as after scripts/deps.sh).
if ! bash "$deps" --check >"$work/out" 2>&1; then
  echo "SKIPPED: not every dependency is on this machine:"
  cat "$work/out"
  exit 0
fi
python=""
for p in /usr/bin/python3 $(command -v python3 || true); do
  "$p" -c 'import torch' 2>/dev/null && { python=$p; break; }
done

# Everything is here: as root with apt, nothing is installed.
expect "all present, root: installs nothing" 0 none "dependencies present" -- \
  PATH="$(fake 0)" bash "$deps"
# RapidCheck absent: `run` goes on without asking apt for it (the GPU machine: no network), `test`
# lists it and fails when not root.
expect "no RapidCheck, run, root: goes on, installs nothing" 0 none \
  "missing \(its tests are skipped\): CMake package rapidcheck" -- PATH="$(fake 0 no-rapidcheck)" bash "$deps" run
expect "no RapidCheck, test, not root: lists it" 1 none "sudo apt-get install librapidcheck-dev$" -- \
  PATH="$(fake 1000 no-rapidcheck)" bash "$deps" test
# CMake 3.20 as root: apt is asked for cmake and nothing else; it is still too old after, so exit 1.
expect "old CMake, root: installs cmake only" 1 ".*install -y -qq --no-install-recommends cmake" \
  "missing: CMake >= 3.24 \(found 3.20.0\)" -- PATH="$(fake 0 old)" bash "$deps" run
# The same Python with torch hidden: apt is asked for python3-torch only when it is Debian's Python,
# else pip's torch is named; nothing else is asked for.
mkdir -p "$work/hide/torch"
echo 'raise ImportError("hidden by deps_test.sh")' >"$work/hide/torch/__init__.py"
printf '#!/bin/sh\nPYTHONPATH=%s exec %s "$@"\n' "$work/hide" "$python" >"$work/python-without-torch"
chmod +x "$work/python-without-torch"
if "$python" -c 'import sys; sys.exit("/usr/lib/python3/dist-packages" not in sys.path)'; then
  expect "no torch, root: installs python3-torch only" 1 ".*--no-install-recommends python3-torch" \
    "missing: Python module torch" -- PATH="$(fake 0)" SDTW_PYTHON="$work/python-without-torch" bash "$deps"
else
  expect "no torch, root: names pip's torch" 1 none "missing: Python module torch in .*pip install torch" -- \
    PATH="$(fake 0)" SDTW_PYTHON="$work/python-without-torch" bash "$deps"
fi
# --check never installs.
expect "--check, root: installs nothing" 1 none "missing: CMake >= 3.24" -- PATH="$(fake 0 old)" bash "$deps" --check

[ $failures = 0 ] || { echo "$failures failed"; exit 1; }
echo "all deps.sh cases passed"
