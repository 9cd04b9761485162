"""``python -m sphinxext_attn``."""

from sphinxext_attn.cli import main

raise SystemExit(main())
