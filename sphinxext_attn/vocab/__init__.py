"""vLLM's vocabulary: where it keeps what the analysis reads, and the names it uses.

Every path, module name, dtype and attention-type name and input grid the
analysis needs is written once here (:mod:`.paths`, :mod:`.names`), so a
release that moves a file is followed in one place, and the command line's
pre-commit filter is derived from the same paths.

Named ``vocab`` rather than ``vllm``: tests mirror the package, and a
``tests/vllm/`` folder on the test path would be found by
``importlib.util.find_spec("vllm")``, which locates an installed vLLM.
"""
