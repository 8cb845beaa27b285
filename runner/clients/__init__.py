"""The runner backends behind `contract.runner_client`: `local` (sandboxed workers on this machine), `remote` (a runner
daemon over HTTP, through the signed client in `http`). Front ends build them; the core only calls them."""
