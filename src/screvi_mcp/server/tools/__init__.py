"""The tools, one module per toolset; each module's `build(backend)` lists its ToolSpecs."""
