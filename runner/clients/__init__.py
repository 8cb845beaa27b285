"""The runner backends behind `runner.client`: `local` (sandboxed workers on this machine), `remote` (a runner
daemon over HTTP, through the signed client in `http`). Front ends build them; the core only calls them."""
