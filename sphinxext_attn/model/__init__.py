"""Typed records the analysis produces and every renderer reads."""
