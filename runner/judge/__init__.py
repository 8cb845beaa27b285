"""The judge process: inputs, expected outputs, verification, statistics and verdicts.

Trusted. It runs in its own sandbox beside the launcher and reaches the submission only through
`runner.judge.launcher_link`. Started by `runner.host.executor` as `main()` of `runner/judge/main.py`.
"""
