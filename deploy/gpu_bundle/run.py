#!/usr/bin/env python3
"""Runs dpu-traceback's GPU truth check on a bare GPU machine.

The folder this script is in holds the amd64 Debian package
(dpu-traceback_amd64.deb: Deno, the agent and its locked dependencies) and
the check (gpu_truth.ts). Nothing is installed: the package's files are
unpacked into a temporary directory (the .deb is an ar archive holding
data.tar.*, which Python reads itself, so no dpkg is needed), the check is
put beside the agent's modules, and the package's Deno runs it offline.
Every argument is passed to the check, e.g.:

    python3 run.py --seconds 60 --out "$OUT"
"""

import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEB = os.path.join(HERE, "dpu-traceback_amd64.deb")
CHECK = os.path.join(HERE, "gpu_truth.ts")


def data_tar(path):
    """The data.tar.* member of the .deb at path: (name, bytes)."""
    with open(path, "rb") as f:
        archive = f.read()
    if archive[:8] != b"!<arch>\n":
        sys.exit(f"Cannot run the GPU truth check: {path} is not a .deb")
    pos = 8
    while pos + 60 <= len(archive):
        header = archive[pos : pos + 60]
        name = header[:16].decode("ascii").strip().rstrip("/")
        size = int(header[48:58].decode("ascii").strip())
        if name.startswith("data.tar"):
            return name, archive[pos + 60 : pos + 60 + size]
        pos += 60 + size + (size % 2)
    sys.exit(f"Cannot run the GPU truth check: {path} holds no data.tar")


def main():
    name, body = data_tar(DEB)
    mode = {"xz": "r:xz", "gz": "r:gz", "zst": None}.get(name.rsplit(".", 1)[-1], "r:")
    if mode is None:
        sys.exit(f"Cannot run the GPU truth check: {name} is zstd, which Python cannot read")
    work = tempfile.mkdtemp(prefix="dpu-traceback-gpu-")
    try:
        with tarfile.open(fileobj=io.BytesIO(body), mode=mode) as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(work, filter="data")
            else:
                tar.extractall(work)
        lib = os.path.join(work, "usr", "lib", "dpu-traceback")
        app = os.path.join(lib, "app")
        os.makedirs(os.path.join(app, "bench"), exist_ok=True)
        shutil.copy(CHECK, os.path.join(app, "bench", "gpu_truth.ts"))
        # The package's npm dependencies are in app/node_modules; DENO_DIR
        # only takes the modules Deno compiles, in the temporary folder.
        env = dict(os.environ, DENO_DIR=os.path.join(work, "deno-dir"), NO_COLOR="1")
        command = [
            os.path.join(lib, "deno"), "run", "--cached-only", "--frozen",
            "--node-modules-dir=manual",
            "--config", os.path.join(app, "deno.json"),
            "--lock", os.path.join(app, "deno.lock"),
            "--no-prompt", "--allow-read", "--allow-write", "--allow-run",
            "--allow-env", "--allow-ffi", "--allow-sys",
            os.path.join(app, "bench", "gpu_truth.ts"),
            *sys.argv[1:],
        ]
        return subprocess.call(command, env=env)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
