"""The core's HTTP API service (`arena api`): runners join, register and send heartbeats here; it can dispatch too.

A front end of `core/`, beside `bot/`, `web/` and `arena/`: handlers parse, call the core and render. It keeps no
state of its own, so several replicas can serve one store.
"""
