"""Plumbing: files written whole, user files, JSON and YAML with line numbers, did-you-mean suggestions."""
