"""Process control on the runner's host: the sandbox, the sandboxed processes, deadlines, and nvcc.

Trusted code that never loads a submission itself: it starts the judge and the launcher (`runner.host.job`).
"""
