"""The launcher process: the one place a stranger's code is loaded and called. Untrusted by design.

Nothing here may import `runner.judge` (`tests/runner/test_trust_boundary.py`): what the launcher can see is what
this folder, `runner.ipc`, `runner.timing` and `problems` give it. Its entry point is `runner/launcher/main.py`.
"""
