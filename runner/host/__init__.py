"""Process control on the runner's host: the sandbox, the sandboxed processes, deadlines, nvcc, and the host's
devices (the slot a job runs in, the peaks measured on its GPU).

Trusted code that never loads a submission itself: it starts the judge and the launcher (`runner.host.executor`)
for one job's run (`runner.job.run`).
"""
