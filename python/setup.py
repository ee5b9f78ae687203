"""Install the package `once` from the tree: pip install --no-build-isolation ./python

The C core is built by the tree's CMake (the same sources, flags and CPU dispatch as
the CLI's and the module's), for the interpreter that runs this script, with Debian's
python3-dev, python3-setuptools, cmake and the library's build dependencies.
"""
import glob
import os
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def version():
    with open(os.path.join(ROOT, "lib", "include", "once.h")) as f:
        return re.search(r'#define ONCE_VERSION_STRING "([^"]+)"', f.read()).group(1)


class BuildWithCMake(build_ext):
    """Build once._once as the tree's target once_python, and take its file."""

    def build_extension(self, ext):
        build = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        subprocess.check_call(["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                               "-DBUILD_TESTING=OFF", "-DONCE_BENCH=OFF",
                               "-DPython3_EXECUTABLE=" + sys.executable])
        subprocess.check_call(["cmake", "--build", build, "--target", "once_python",
                               "-j%d" % (os.cpu_count() or 1)])
        built = glob.glob(os.path.join(build, "python", "once", "_once*.so"))
        if len(built) != 1:
            raise RuntimeError("the build made no single once/_once*.so: %r" % built)
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built[0], target)


setup(
    name="once",
    version=version(),
    description="Deliver each event of a stream once: Bloom filters and windows in "
                "bounded memory",
    packages=["once"],
    package_data={"once": ["__init__.pyi", "py.typed"]},
    ext_modules=[Extension("once._once", sources=[])],
    cmdclass={"build_ext": BuildWithCMake},
    python_requires=">=3.9",
)
