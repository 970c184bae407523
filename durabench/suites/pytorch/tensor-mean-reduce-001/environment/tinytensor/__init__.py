"""tinytensor: nested-list tensors."""
