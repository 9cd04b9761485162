"""Renderers: records to markdown, JSON and docutils nodes."""
