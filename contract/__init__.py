"""The contract at the bottom of the tree: what every layer agrees on, and nothing else.

- `names`: the names (dtypes, languages, modes, job states, defaults, the mode descriptions), each listed once;
- `wire`: the models that cross a process or network boundary (job requests, progress events, results, the
  runner and fleet APIs' bodies);
- `errors`: the error codes on the wire and the errors a runner backend raises;
- `runner_client`: the interface the core needs of a runner, whatever carries the job there.

It imports nothing of the project (`tests/test_architecture.py` checks), so the core, the front ends, the runner's
processes and the benches may all import it.
"""
