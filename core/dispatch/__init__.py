"""The dispatcher: hands queued jobs to idle runners of the right GPU type, and survives its own restarts.

Runners are reached through the `JobRunner` protocol (the HTTP runner client implements it for remote GPU
hosts; `runner.clients.local.LocalRunner` runs jobs on this machine). The queue lives in Postgres
(`core.store.jobs`), so the dispatcher itself keeps no state that a crash could lose:

- claiming is `FOR UPDATE SKIP LOCKED`, so several dispatchers never take the same job;
- a claim is a lease, kept alive by a heartbeat; a dispatcher that dies stops renewing it;
- on start, a dispatcher takes over its own leases and any that lapsed, and re-attaches to the runner that
  holds the job (`JobRunner.attach`) or requeues it;
- a runner that is lost mid-job puts the job back in the queue, at most `max_attempts` dispatches in all.

Outages are waited out, not counted against jobs:

- the store: every step that reads or writes it is retried until it answers (a runner slot is never kept by a
  step that failed), the LISTEN connection is made again, and a result that could not be stored is kept and
  stored when the database is back;
- a runner that does not answer (`RunnerUnavailableError`) is set aside and probed every `runner_probe_s`. A
  job it never got goes back to the queue with the attempt not counted; a job it had accepted is followed
  again once it answers. The hook `on_runner_state` hears when a GPU type loses its last answering runner
  and when one is back, so that users are told their job waits. Jobs fail only when no runner of their GPU
  type has answered for `runner_outage_s`.

Cancelling `run()` behaves like a crash as far as the queue is concerned: in-flight jobs keep their leases,
and the next start deals with them.

The package, by part: the loop, recovery, claiming and the jobs in flight (`dispatcher.py`); the runners and
their slots (`pool.py`); following and finishing one leased job (`job_run.py`); the LISTEN connection
(`queue_listener.py`); runners that do not answer (`runner_watch.py`).
"""

from __future__ import annotations

from core.dispatch.dispatcher import Dispatcher, Recovery
from core.dispatch.job_run import EventHook, job_key
from core.dispatch.pool import RunnerPool
from core.dispatch.runner_watch import RunnerStateHook

__all__ = ["Dispatcher", "EventHook", "Recovery", "RunnerPool", "RunnerStateHook", "job_key"]
