"""The library's data access and rules, one module per resource; no HTTP in here."""
