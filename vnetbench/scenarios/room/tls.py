"""The room's server over HTTPS (a workload asking over it): a certificate and key made
per pass with the run's PKI helper (runtime/pki.py), kept as an overlay's keys are,
in the run's scratch directory (runtime/scratch.py: never in results or the
repository; `vnetbench clean` wipes a killed run's), mounted read-only into the
server's probe where nginx reads them (images/tools/vnetbench-room TLS_DIR), and
removed when the pass ends, whatever ended it."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from vnetbench.engines.base import Mount
from vnetbench.runtime.labels import current_owner
from vnetbench.runtime.pki import make_pki
from vnetbench.runtime.scratch import OWNER_FILE, stack_scratch

TLS_PORT = 8443
TLS_DIR = "/run/vnetbench-room-tls"  # images/tools/vnetbench-room's TLS_DIR
ROLE = "server"  # make_pki's files: server.pem, server.key (and the CA's ca.pem)


@contextmanager
def server_tls(run_id: str, stack_dir: Path, name: str, root: Path | None = None
               ) -> Iterator[Mount]:
    """The server's certificate and key for one pass (`name`: its probe's), as the mount
    its probe is given; the directory gone on leaving, and the run's scratch
    directory with it once nothing else is in it."""
    directory = stack_scratch(run_id, stack_dir / name, current_owner(), root)
    try:
        make_pki(directory, run_id, [ROLE])
        yield Mount(directory, TLS_DIR)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
        run_dir = directory.parent
        if run_dir.is_dir() and not [p for p in run_dir.iterdir() if p.name != OWNER_FILE]:
            shutil.rmtree(run_dir, ignore_errors=True)


def tls_url(url: str) -> str:
    """The server's HTTPS beside its HTTP `url` (http://ADDRESS:PORT)."""
    return f"https://{urlsplit(url).netloc.rpartition(':')[0]}:{TLS_PORT}"
