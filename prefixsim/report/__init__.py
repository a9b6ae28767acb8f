"""Rendering results: terminal tables, CSV / JSON / Markdown files, charts and the HTML page."""
