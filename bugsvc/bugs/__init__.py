"""Bugs: the pieces the bug, comment, attachment and last-visit services share."""
