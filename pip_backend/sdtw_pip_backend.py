"""PEP 517 backend for the Python package sdtw_torch: one CMake build of the library sdtw_torch
against the torch of the installing Python, then a wheel of CMake's install component `python`
(the package's .py files, libsdtw_torch and sdtw_torch_build.json, which holds the version).

Environment:
  SDTW_BUILD_DIR              a configured build tree to use as it is (default: build-python/ in
                              the source tree, configured here: only the operators, no tests)
  TORCH_CUDA_ARCH_LIST        GPU architectures, e.g. "9.0" (default: those of the GPUs present)
  CMAKE_ARGS                  extra configure arguments
  CMAKE_BUILD_PARALLEL_LEVEL  build jobs (default: every core)
"""
import base64
import hashlib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zipfile
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent
DISTRIBUTION = "sdtw_torch"
SUMMARY = "Soft-DTW for PyTorch on CPU and CUDA: accurate gradients at any length"

_TORCH_PROBE = """import json, torch
gpus = range(torch.cuda.device_count()) if torch.cuda.is_available() else []
print(json.dumps({"version": torch.__version__, "cuda": torch.version.cuda,
                  "cmake_prefix_path": torch.utils.cmake_prefix_path,
                  "archs": ["%d.%d" % torch.cuda.get_device_capability(i) for i in gpus]}))"""


def _log(message):
    print("sdtw_pip_backend: " + message, file=sys.stderr, flush=True)


def _run(command, **kwargs):
    _log(" ".join(shlex.quote(str(c)) for c in command))
    subprocess.run([str(c) for c in command], check=True, **kwargs)


def _torch():
    """The torch of the installing Python: pip's build isolation hides its site-packages from this
    process (PYTHONPATH, PYTHONNOUSERSITE), so it is asked in a process without them. That process
    runs outside the source tree: `python -c` puts its working directory first on sys.path, where a
    folder of the tree could pass for a package named torch."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONNOUSERSITE")}
    with tempfile.TemporaryDirectory(prefix="sdtw-torch-probe-") as outside:
        probe = subprocess.run([sys.executable, "-c", _TORCH_PROBE], env=env, cwd=outside,
                               capture_output=True, text=True)
    if probe.returncode != 0:
        raise RuntimeError(sys.executable + " cannot import torch; install torch first (the operators are "
                           "built against it), then pip install --no-build-isolation .\n" + probe.stderr)
    return json.loads(probe.stdout.strip().splitlines()[-1])


def _major_minor(version):
    return tuple(int(v) for v in re.findall(r"\d+", version)[:2])


def _configure(build, torch):
    args = ["-S", SOURCE, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_TESTING=OFF",
            "-DSDTW_SKIP_PARTS=baselines;harness"]
    if not (build / "CMakeCache.txt").exists() and shutil.which("ninja"):
        args += ["-G", "Ninja"]
    torch_dir = Path(torch["cmake_prefix_path"]) / "Torch"
    if (torch_dir / "TorchConfig.cmake").is_file():  # pip's torch; Debian's LibTorch is found as it is
        args.append("-DTorch_DIR=" + str(torch_dir))
    env = dict(os.environ)
    if torch["cuda"] is None:
        args.append("-DSDTW_ENABLE_CUDA=OFF")
    else:
        arch_list = env.get("TORCH_CUDA_ARCH_LIST") or ";".join(torch["archs"])
        if arch_list:
            env["TORCH_CUDA_ARCH_LIST"] = arch_list
            archs = sorted({a.replace("+PTX", "").replace(".", "") for a in re.split(r"[;\s]+", arch_list) if a})
            args.append("-DCMAKE_CUDA_ARCHITECTURES=" + ";".join(archs))
    args += shlex.split(env.get("CMAKE_ARGS", ""))
    _run(["cmake"] + args, env=env)


def _cmake_build():
    """Builds the library sdtw_torch and installs the component `python` into a fresh folder."""
    torch = _torch()
    build = Path(os.environ.get("SDTW_BUILD_DIR") or SOURCE / "build-python").resolve()
    if not (build / "CMakeCache.txt").exists() or not os.environ.get("SDTW_BUILD_DIR"):
        _configure(build, torch)
    cache = (build / "CMakeCache.txt").read_text()
    if re.search(r"^Torch_DIR:\w+=.*NOTFOUND", cache, re.M):
        raise RuntimeError("CMake did not find LibTorch in " + str(build) + " (see its configure output)")
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
    _run(["cmake", "--build", build, "--target", "sdtw_torch", "--parallel", jobs])
    staging = Path(tempfile.mkdtemp(prefix="sdtw-wheel-"))
    _run(["cmake", "--install", build, "--component", "python", "--prefix", staging])
    info = json.loads((staging / "sdtw_torch" / "sdtw_torch_build.json").read_text())
    if _major_minor(info["torch"]) != _major_minor(torch["version"]):
        raise RuntimeError("%s was built against LibTorch %s, but %s has torch %s"
                           % (build, info["torch"], sys.executable, torch["version"]))
    return staging, info


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


def _metadata(version):
    return ("Metadata-Version: 2.1\nName: sdtw-torch\nVersion: %s\nSummary: %s\n"
            "Requires-Python: >=3.8\nRequires-Dist: torch\n" % (version, SUMMARY))


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    staging, info = _cmake_build()
    version = info["version"]
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    tag = "py3-none-" + platform  # no Python C API: one library per torch, any Python 3
    name = "%s-%s-%s.whl" % (DISTRIBUTION, version, tag)
    dist_info = "%s-%s.dist-info" % (DISTRIBUTION, version)
    files = []
    for path in sorted((staging / "sdtw_torch").rglob("*")):
        if path.is_file():
            files.append((path.relative_to(staging).as_posix(), path.read_bytes(), path.stat().st_mode))
    wheel = "Wheel-Version: 1.0\nGenerator: sdtw_pip_backend\nRoot-Is-Purelib: false\nTag: %s\n" % tag
    files.append((dist_info + "/METADATA", _metadata(version).encode(), 0o644))
    files.append((dist_info + "/WHEEL", wheel.encode(), 0o644))
    record = [_record_line(n, data) for n, data, _ in files] + [dist_info + "/RECORD,,"]
    files.append((dist_info + "/RECORD", ("\n".join(record) + "\n").encode(), 0o644))
    with zipfile.ZipFile(Path(wheel_directory) / name, "w", zipfile.ZIP_DEFLATED) as archive:
        for arcname, data, mode in files:
            entry = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
            entry.external_attr = (mode & 0o777 | 0o100000) << 16
            archive.writestr(entry, data, zipfile.ZIP_DEFLATED)
    shutil.rmtree(staging)
    return name


def build_sdist(sdist_directory, config_settings=None):
    """The files git tracks, with PKG-INFO; the version is CMake's project version."""
    version = re.search(r"project\(sdtw VERSION ([\d.]+)", (SOURCE / "CMakeLists.txt").read_text()).group(1)
    root = "%s-%s" % (DISTRIBUTION, version)
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=SOURCE, check=True, capture_output=True).stdout
    name = root + ".tar.gz"
    with tarfile.open(Path(sdist_directory) / name, "w:gz") as archive:
        for path in tracked.decode().split("\0"):
            if path and (SOURCE / path).is_file():
                archive.add(SOURCE / path, arcname=root + "/" + path)
        pkg_info = _metadata(version).encode()
        entry = tarfile.TarInfo(root + "/PKG-INFO")
        entry.size = len(pkg_info)
        archive.addfile(entry, io.BytesIO(pkg_info))
    return name
