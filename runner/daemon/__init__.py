"""The daemon process: the signed HTTP API, the job table, metrics and the host's devices.

It never imports torch and never creates a CUDA context; each job runs in processes that `runner.host` starts.
"""
