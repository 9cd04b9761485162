"""Work in a forked child process, where a core is spare."""
