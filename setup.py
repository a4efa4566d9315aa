"""Builds tacos's Python extension with CMake for `pip install .` (metadata: pyproject.toml).

The extension is the CMake target `_tacos` (python/CMakeLists.txt); only it and the libraries it
links are built, never the tests, benchmarks or fuzzers. Where it is built:
- $TACOS_BUILD_DIR when set;
- else ./build when it is a configured CMake build (the one ./run.sh and ./test.sh use): an
  existing build makes the install take seconds;
- else ./build/pip, configured here with the tests, benchmarks and fuzzers switched off, with
  Ninja when it is installed (package ninja-build): Make builds one library at a time and waits
  for each library's last file, Ninja compiles every library's files side by side.
`pip install -v` shows CMake's progress ([ 42%] Building ...); without -v pip shows a spinner.
"""
import glob
import os
import shutil
import subprocess
import sys
import time

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))

# Measured (docs/python.md, `import tacos`): a first build is 7 CPU-minutes, 3.5 minutes of a
# quiet 2-core machine; more when other work shares the cores.
FIRST_BUILD = ("a first build takes 7 CPU-minutes, about 4 minutes on 2 free cores; "
               "seconds when it is built already")


def _say(text):
    print(f"tacos: {text}", file=sys.stderr, flush=True)


def _build_dir():
    if os.environ.get("TACOS_BUILD_DIR"):
        return os.path.abspath(os.environ["TACOS_BUILD_DIR"])
    default = os.path.join(ROOT, "build")
    if os.path.exists(os.path.join(default, "CMakeCache.txt")):
        return default
    return os.path.join(default, "pip")


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = _build_dir()
        started = time.monotonic()
        if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
            configure = ["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                         f"-DPython3_EXECUTABLE={sys.executable}",
                         # Only what `import tacos` needs.
                         "-DTACOS_BUILD_TESTS=OFF", "-DTACOS_BUILD_BENCH=OFF", "-DTACOS_FUZZ=OFF"]
            if shutil.which("ninja"):
                configure += ["-G", "Ninja"]
            if shutil.which("ccache"):
                configure.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
            _say(f"configuring {build}")
            subprocess.check_call(configure)
        jobs = str(os.cpu_count() or 1)
        _say(f"building the extension in {build} with {jobs} jobs ({FIRST_BUILD})")
        subprocess.check_call(["cmake", "--build", build, "--target", "_tacos", "-j", jobs])
        built = glob.glob(os.path.join(build, "python", "tacos", "_tacos*.so"))
        if len(built) != 1:
            raise RuntimeError(f"expected one _tacos*.so in {build}/python/tacos, found {built}")
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built[0], target)
        _say(f"extension built in {time.monotonic() - started:.0f} s")


setup(
    ext_modules=[Extension("tacos._tacos", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    # setuptools' own scratch space, kept out of the CMake build tree's top level.
    options={"build": {"build_base": os.path.join("build", "setuptools")}},
)
