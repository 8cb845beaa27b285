-- What the solution printed in its latest run, per phase (runner.api.PhaseOutput: phase, the first 8 KiB of stdout
-- and of stderr, the bytes cut after each), stored with the result so that the CLI, Discord and the API show it
-- after the result as the runner reported it. A list of objects, empty when it printed nothing.
ALTER TABLE submissions ADD COLUMN output jsonb NOT NULL DEFAULT '[]';
