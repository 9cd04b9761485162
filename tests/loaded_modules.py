"""Which of the package's modules a command-line run imports (start-up cost).

The run happens in a fresh interpreter, away from the checkout, so it imports
the package this test process runs (installed or not), nothing already loaded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import sphinxext_attn


def modules_loaded_by(args: list[str], cwd: Path) -> list[str]:
    """The ``sphinxext_attn`` modules loaded after ``sphinxext-attn ARGS`` ran
    (which must succeed), sorted."""
    code = (
        "import json, sys; from sphinxext_attn.cli.main import main; "
        f"rc = main({args!r}); "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('sphinxext_attn.')))); "
        "sys.exit(rc)"
    )
    # the folder holding the package this process imported, first on the child's path
    # (else an installed copy elsewhere is imported and its cache entries differ)
    here = str(Path(sphinxext_attn.__file__).resolve().parent.parent)
    paths = [here, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, env=env
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])
