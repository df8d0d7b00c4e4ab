"""`python -m screvi_mcp.local.search.mpnet`: convert the installed wheels once (cached).

The background install (auto.py) converts in this subprocess, with a deadline: the
conversion peaks at 2.4 GB, and a failure (or the OOM killer) then ends this process, not the
server. Exit status 0 when the model loads, 1 with one line on stderr saying why.
"""

from __future__ import annotations

import sys

from screvi_mcp.local.search.embedder import EmbeddingModelError
from screvi_mcp.local.search.mpnet.load import load_mpnet_embedder


def main() -> int:
    try:
        load_mpnet_embedder()  # converts once, and proves the result loads
    except EmbeddingModelError as failure:
        print(f"screvi-mcp: {failure}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
