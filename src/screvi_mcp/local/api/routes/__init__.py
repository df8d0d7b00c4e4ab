"""HTTP routes of the embedded library, one module per resource."""
