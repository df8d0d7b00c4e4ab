"""Storage: the library file (SQLite, migrations, connections) and the rules of each resource
(`store/`). No HTTP in here: the REST service in `local/api` sits above it."""
