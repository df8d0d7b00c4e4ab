from screvi_mcp.cli import main

raise SystemExit(main())
