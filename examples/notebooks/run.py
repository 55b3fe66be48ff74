"""Execute every notebook of this directory (or those named) headlessly
with nbclient, in a kernel running this Python, and fail on the first cell
that fails. make test-notebook runs it with the Python of the package's
virtual environment and TEMPORA unset, so the notebook finds the program
built into the package."""

import glob
import os
import subprocess
import sys
import tempfile
import time

import nbclient
import nbformat


def main(paths):
    here = os.path.dirname(os.path.abspath(__file__))
    paths = paths or sorted(glob.glob(os.path.join(here, "*.ipynb")))
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    # A kernel running this Python (the one the package is installed in),
    # registered in a throwaway Jupyter directory: what a user does once
    # with "python -m ipykernel install --user --name tempora".
    tmp = tempfile.mkdtemp(prefix="tempora-kernel-")
    subprocess.run([sys.executable, "-m", "ipykernel", "install", "--prefix", tmp, "--name", "tempora-test"],
                   check=True, capture_output=True)
    os.environ["JUPYTER_PATH"] = os.path.join(tmp, "share", "jupyter")
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        start = time.monotonic()
        client = nbclient.NotebookClient(nb, timeout=300, kernel_name="tempora-test",
                                         resources={"metadata": {"path": os.path.dirname(os.path.abspath(path))}})
        try:
            client.execute()
        except nbclient.exceptions.CellExecutionError as exc:
            print("%s: a cell failed:\n%s" % (path, exc), file=sys.stderr)
            return 1
        print("%s: %d cells ran in %.1f s" % (os.path.relpath(path), len(nb.cells), time.monotonic() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
