"""The public web leaderboard: read-only pages over the core, rendered on the server (`arena web`).

A front end like `bot/` and `arena/`: routes parse the request, call the core, and render HTML with the
standard library (every interpolated string escaped). Never imports discord.py or torch.
"""
