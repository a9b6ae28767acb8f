"""Click commands, one module per family; cli/group.py imports them lazily."""
