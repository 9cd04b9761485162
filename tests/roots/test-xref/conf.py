# The tree comes from the tests (confoverrides), since the root is copied.
extensions = ["sphinxext_attn", "myst_parser"]
latex_documents = [("index", "xref.tex", "xref", "tests", "manual")]
