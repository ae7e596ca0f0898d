"""pytest plugin for devlint.runtime (issue 5); must import without torch."""
