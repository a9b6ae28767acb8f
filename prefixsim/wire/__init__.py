"""Request bodies as the model sees them, one module per API: each renders a body into Blocks."""
