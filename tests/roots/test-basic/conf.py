# The tree comes from the tests (confoverrides), since the root is copied.
extensions = ["sphinxext_attn", "myst_parser"]
