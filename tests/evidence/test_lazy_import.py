"""The evidence pipeline's ranking stack loads only when the evidence tool is built (in its warm-up thread)."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("bm25s", "numpy", "pythainlp", "publicsuffixlist", "dsweb_ref.tools.evidence_search")


def test_building_the_runtime_does_not_load_the_evidence_stack() -> None:
    code = (
        "import sys\n"
        "from dsweb_ref.runtime import build_runtime\n"
        "runtime = build_runtime(); runtime.search_tool(); runtime.fetch_tool()\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
        "runtime.evidence_tool()\n"
        "from dsweb_ref.tools._evidence_units import warm_up\n"
        "warm_up().result(timeout=60)  # the ranking stack loads in the warm-up thread the tool started\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    before, after = out.stdout.splitlines()
    assert before == "[]"
    assert "bm25s" in after and "dsweb_ref.tools.evidence_search" in after
