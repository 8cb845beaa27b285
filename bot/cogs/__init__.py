"""Discord adapters: one cog per area; each command parses options, calls the core, renders and sends."""
