"""The daemon process: the signed HTTP API, the job table, metrics and the slots it serves.

It never imports torch and never creates a CUDA context; each job runs (`runner.job.run`) in processes that
`runner.host` starts.
"""
