"""The judge process: inputs, expected outputs, verification, statistics and verdicts.

Trusted. It runs in its own sandbox beside the launcher and reaches the submission only through
`runner.judge.launcher_link`. Run as `python -m runner.judge` (`runner/judge/main.py`).
"""
