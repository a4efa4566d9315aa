"""Builds tacos's Python extension with CMake for `pip install .` (metadata: pyproject.toml).

The extension is the CMake target `_tacos` (python/CMakeLists.txt). It is built in the CMake
build folder $TACOS_BUILD_DIR, default ./build, the one ./run.sh and ./test.sh use, so an
existing build makes the install take seconds; a fresh checkout configures and builds there.
"""
import glob
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = os.path.abspath(os.environ.get("TACOS_BUILD_DIR", os.path.join(ROOT, "build")))
        if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
            subprocess.check_call(["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                                   f"-DPython3_EXECUTABLE={sys.executable}"])
        subprocess.check_call(["cmake", "--build", build, "--target", "_tacos", "-j",
                               str(os.cpu_count() or 1)])
        built = glob.glob(os.path.join(build, "python", "tacos", "_tacos*.so"))
        if len(built) != 1:
            raise RuntimeError(f"expected one _tacos*.so in {build}/python/tacos, found {built}")
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built[0], target)


setup(
    ext_modules=[Extension("tacos._tacos", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    # setuptools' own scratch space, kept out of the CMake build tree's top level.
    options={"build": {"build_base": os.path.join("build", "setuptools")}},
)
