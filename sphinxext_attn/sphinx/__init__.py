"""Sphinx glue: config, directives, environment caching and events."""
