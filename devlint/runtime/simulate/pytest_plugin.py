"""pytest plugin for simulated CUDA (issue 6); must import without torch."""
