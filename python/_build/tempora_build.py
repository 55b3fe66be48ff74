"""A minimal PEP 517 / PEP 660 build backend for the tempora package.

It builds a pure-Python wheel (the tempora/ directory plus metadata from
pyproject.toml) with the standard library alone, so that
``pip install ./python`` needs neither setuptools nor wheel and never
downloads anything. Editable installs (``pip install -e ./python``) add a
.pth file pointing at this source tree.
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "tempora"


def _project():
    """Return the [project] table of pyproject.toml (only the keys used)."""
    path = os.path.join(ROOT, "pyproject.toml")
    with open(path, "rb") as f:
        raw = f.read()
    try:
        import tomllib  # Python 3.11+
    except ImportError:
        tomllib = None
    if tomllib is not None:
        return tomllib.loads(raw.decode("utf-8"))["project"]
    # Older Pythons: read the simple string and string-list keys of the
    # [project] table.
    text = raw.decode("utf-8")
    m = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.S | re.M)
    if not m:
        raise RuntimeError("pyproject.toml has no [project] table")
    project = {}
    for key, value in re.findall(r'^([A-Za-z-]+)\s*=\s*(".*?"|\[.*?\])\s*$', m.group(1), re.S | re.M):
        if value.startswith("["):
            project[key] = re.findall(r'"(.*?)"', value)
        else:
            project[key] = value[1:-1]
    return project


def _metadata():
    p = _project()
    lines = [
        "Metadata-Version: 2.1",
        "Name: " + p["name"],
        "Version: " + p["version"],
        "Summary: " + p.get("description", ""),
        "License: BSD-3-Clause",
    ]
    if "requires-python" in p:
        lines.append("Requires-Python: " + p["requires-python"])
    for dep in p.get("dependencies", []):
        lines.append("Requires-Dist: " + dep)
    body = ""
    readme = os.path.join(ROOT, "README.md")
    if os.path.exists(readme):
        lines.append("Description-Content-Type: text/markdown")
        with open(readme, encoding="utf-8") as f:
            body = f.read()
    return p["name"], p["version"], "\n".join(lines) + "\n\n" + body


def _dist_info(name, version):
    return "%s-%s.dist-info" % (name.replace("-", "_"), version)


def _wheel_name(name, version):
    return "%s-%s-py3-none-any.whl" % (name.replace("-", "_"), version)


def _record_hash(data):
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _package_files():
    """Yield (archive name, path) for every file of the package."""
    base = os.path.join(ROOT, PACKAGE)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for fn in sorted(filenames):
            if fn.endswith((".pyc", ".pyo")):
                continue
            path = os.path.join(dirpath, fn)
            yield os.path.relpath(path, ROOT).replace(os.sep, "/"), path


def _write_wheel(wheel_directory, contents):
    """Write a wheel holding contents (archive name -> bytes) plus metadata."""
    name, version, metadata = _metadata()
    info = _dist_info(name, version)
    files = dict(contents)
    files[info + "/METADATA"] = metadata.encode("utf-8")
    files[info + "/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: tempora_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    ).encode("ascii")
    files[info + "/top_level.txt"] = (PACKAGE + "\n").encode("ascii")
    record = []
    for arc in sorted(files):
        record.append("%s,%s,%d" % (arc, _record_hash(files[arc]), len(files[arc])))
    record.append(info + "/RECORD,,")
    files[info + "/RECORD"] = ("\n".join(record) + "\n").encode("utf-8")
    wheel = _wheel_name(name, version)
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w", zipfile.ZIP_DEFLATED) as zf:
        for arc in sorted(files):
            if arc.endswith("/RECORD"):
                continue
            zf.writestr(zipfile.ZipInfo(arc, date_time=(1980, 1, 1, 0, 0, 0)), files[arc])
        zf.writestr(zipfile.ZipInfo(info + "/RECORD", date_time=(1980, 1, 1, 0, 0, 0)), files[info + "/RECORD"])
    return wheel


# PEP 517 hooks.


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    contents = {}
    for arc, path in _package_files():
        with open(path, "rb") as f:
            contents[arc] = f.read()
    return _write_wheel(wheel_directory, contents)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, {"_tempora_editable.pth": (ROOT + "\n").encode("utf-8")})


def build_sdist(sdist_directory, config_settings=None):
    name, version, metadata = _metadata()
    base = "%s-%s" % (name, version)
    path = os.path.join(sdist_directory, base + ".tar.gz")
    members = ["pyproject.toml", "README.md", "_build/tempora_build.py"] + [arc for arc, _ in _package_files()]
    with tarfile.open(path, "w:gz") as tf:
        for arc in members:
            full = os.path.join(ROOT, arc)
            if os.path.exists(full):
                with open(full, "rb") as f:
                    data = f.read()
                ti = tarfile.TarInfo(base + "/" + arc)
                ti.size, ti.mtime, ti.mode = len(data), 0, 0o644
                tf.addfile(ti, io.BytesIO(data))
        data = metadata.encode("utf-8")
        ti = tarfile.TarInfo(base + "/PKG-INFO")
        ti.size, ti.mtime, ti.mode = len(data), 0, 0o644
        tf.addfile(ti, io.BytesIO(data))
    return base + ".tar.gz"
