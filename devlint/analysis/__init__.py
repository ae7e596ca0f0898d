"""What devlint knows about a file beyond its syntax: guards, idioms, device facts."""
