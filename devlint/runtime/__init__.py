"""Runtime device checks (issue 5). Imports torch lazily."""
