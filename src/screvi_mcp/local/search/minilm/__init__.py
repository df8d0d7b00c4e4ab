"""Data: the all-MiniLM-L6-v2 tokenizer (Apache-2.0, see NOTICE)."""
