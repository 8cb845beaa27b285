"""One job's run on this host (`runner.job.run`): compile, judge and, in mode profile, profile.

It stands above what it drives, the host's process control (`runner.host`) and the profiler (`runner.profiling`),
and below its callers: the daemon's job table (`runner.daemon.jobs`) and the local backend (`runner.clients.local`).
"""
