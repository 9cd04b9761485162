"""A model's attention layers as the release builds them, read from its
``config.json`` and the release's own code (registry, config convertor, model
file), and the backend each layer kind gets. Sphinx-free."""
