"""The build hook of the tempora package: setuptools' build_py, plus the Go
binary built into the package (tempora/bin/tempora) when ``go`` is on PATH.

pyproject.toml holds the package's metadata; this file only adds the hook.
The binary is built from the repository this directory belongs to (its
parent holds go.mod): ``go build ./cmd/tempora``, which needs no network
once Go's module cache holds the dependencies (``make build`` fills it). A
build without Go, or from an sdist outside the repository, installs the
package without the binary: tempora then finds the program through the
TEMPORA environment variable or PATH (tempora.find_binary).

The program is linked statically (CGO_ENABLED=0, -trimpath), so that a wheel
built here (make wheel) runs on any Linux of the same architecture, with no
Go and no C library of a given version. Such a wheel holds a platform
program but no Python extension: it is tagged py3-none-<platform> (e.g.
tempora-0.1.0-py3-none-linux_x86_64.whl), for every Python 3 on that
platform, never "any".

Set TEMPORA_BUILD_GO=0 to skip the Go build even when Go is present.
"""

import os
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

try:
    from wheel.bdist_wheel import bdist_wheel
except ImportError:  # no wheel package: pip install falls back to setup.py install
    bdist_wheel = None

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODULE = "module github.com/tempora-dev/tempora"


def _repository() -> "str | None":
    """The root of the tempora repository this package is built from, or
    None (an sdist unpacked elsewhere)."""
    try:
        with open(os.path.join(ROOT, "go.mod"), encoding="utf-8") as f:
            first = f.readline().strip()
    except OSError:
        return None
    if first != MODULE or not os.path.isdir(os.path.join(ROOT, "cmd", "tempora")):
        return None
    return ROOT


def _will_build() -> bool:
    """Whether the build hook builds the program (Go present, the
    repository next to this directory, not switched off)."""
    return os.environ.get("TEMPORA_BUILD_GO", "1") != "0" and shutil.which("go") is not None and \
        _repository() is not None


class BuildPyWithBinary(build_py):
    """build_py, then ``CGO_ENABLED=0 go build -trimpath -o
    <build_lib>/tempora/bin/tempora ./cmd/tempora`` in the repository (a
    static program)."""

    def run(self) -> None:
        super().run()
        if os.environ.get("TEMPORA_BUILD_GO", "1") == "0":
            print("tempora: TEMPORA_BUILD_GO=0: not building the Go binary", file=sys.stderr)
            return
        go = shutil.which("go")
        root = _repository()
        if go is None or root is None:
            why = "go is not on PATH" if go is None else "the Go sources (../go.mod) are not next to this package"
            print("tempora: %s: installing without the tempora program; tempora finds it through the TEMPORA "
                  "environment variable or PATH" % why, file=sys.stderr)
            return
        out = os.path.join(os.path.abspath(self.build_lib), "tempora", "bin", "tempora")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        print("tempora: building the tempora program: %s build -o %s ./cmd/tempora (in %s)" % (go, out, root),
              file=sys.stderr)
        env = dict(os.environ, CGO_ENABLED="0")
        subprocess.run([go, "build", "-trimpath", "-o", out, "./cmd/tempora"], cwd=root, env=env, check=True)


class BinaryDistribution(Distribution):
    """A distribution that holds a platform binary when the hook builds
    one: its wheel is then tagged for this platform, not as pure Python."""

    def has_ext_modules(self) -> bool:
        return _will_build()


cmdclass = {"build_py": BuildPyWithBinary}

if bdist_wheel is not None:
    class BdistWheelPlatform(bdist_wheel):
        """bdist_wheel tagged py3-none-<platform> when the wheel holds the
        program: the program depends on the platform, not on the Python
        version or ABI (there is no extension module)."""

        def finalize_options(self) -> None:
            super().finalize_options()
            if _will_build():
                self.root_is_pure = False

        def get_tag(self) -> "tuple[str, str, str]":
            python, abi, plat = super().get_tag()
            if _will_build():
                return "py3", "none", plat
            return python, abi, plat

    cmdclass["bdist_wheel"] = BdistWheelPlatform

setup(cmdclass=cmdclass, distclass=BinaryDistribution)
