"""Device dataflow (issue 3) — placeholder."""
