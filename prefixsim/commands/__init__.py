"""Click commands, one module per family; cli.py imports them lazily."""
