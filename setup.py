"""Packages python/paddle_mlir with its native extension paddle_mlir._core.

The extension is built by the project's CMake build (it links our C++
libraries and libMLIR), not by setuptools: build_ext builds the CMake target
`paddle_mlir_core` in the existing build directory (PADDLE_BUILD_DIR or
build/; scripts/build.sh configures and builds it when absent) and copies
`_core*.so` into the package. Install with

    pip install --no-build-isolation --no-deps .
"""

import glob
import os
import shutil
import subprocess
import sysconfig

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
# setuptools' own scratch space stays inside the CMake build directory.
SCRATCH = os.path.join("build", "setuptools")


def cmake_build_dir():
    path = os.environ.get("PADDLE_BUILD_DIR", "build")
    return path if os.path.isabs(path) else os.path.join(ROOT, path)


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = cmake_build_dir()
        jobs = os.environ.get("PADDLE_JOBS", str(os.cpu_count() or 1))
        if not os.path.exists(os.path.join(build_dir, "build.ninja")):
            # Configures (with the venv's Python) and builds everything.
            subprocess.check_call(["bash", "scripts/build.sh"], cwd=ROOT)
        else:
            subprocess.check_call(["ninja", "-C", build_dir, "-j" + jobs,
                                   "paddle_mlir_core"])
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = os.path.join(build_dir, "python_packages", "paddle_mlir",
                             "_core" + suffix)
        if not os.path.exists(built):
            found = glob.glob(os.path.join(os.path.dirname(built), "_core*"))
            raise RuntimeError(
                f"{built} is missing (found: {found or 'nothing'}): the "
                "CMake build was configured for another Python; configure "
                "it with -DPython3_EXECUTABLE=<this python>")
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built, target)
        shutil.copymode(built, target)


os.makedirs(os.path.join(ROOT, SCRATCH), exist_ok=True)

setup(
    name="paddle-mlir",
    version="0.1.0",
    description="Paddle-MLIR: an ML compiler on MLIR, from Python",
    python_requires=">=3.9",
    install_requires=["numpy"],
    package_dir={"": "python"},
    packages=find_packages("python",
                           include=["paddle_mlir", "paddle_mlir.*"]),
    package_data={"": ["*.json", "*.mlir", "*.txt", "py.typed"]},
    ext_modules=[CMakeExtension("paddle_mlir._core")],
    cmdclass={"build_ext": CMakeBuild},
    entry_points={"console_scripts": [
        "paddle-import-onnx = paddle_mlir.onnx.cli:main",
    ]},
    options={
        "build": {"build_base": SCRATCH},
        "egg_info": {"egg_base": SCRATCH},
        "bdist_wheel": {"bdist_dir": os.path.join(SCRATCH, "bdist")},
    },
    zip_safe=False,
)
