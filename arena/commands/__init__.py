"""One module per command group. Each defines `register(subparsers)`; `arena.cli` finds them all."""
