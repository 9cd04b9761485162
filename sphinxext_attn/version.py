"""The release of sphinxext-attn (pyproject.toml says the same).

A module of its own so that the Sphinx glue can name it without importing the
package's ``__init__``, whose :func:`setup` imports the glue.
"""

__version__ = "0.1.0"
