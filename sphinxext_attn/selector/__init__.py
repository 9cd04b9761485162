"""The selector widget's table: every decision over a grid of configurations,
asked at docs build time for the browser to look up."""
