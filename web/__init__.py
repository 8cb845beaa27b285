"""The public web site (`arena web`): boards, problems, results and players, rendered on the server over the core.

A front end like `bot/` and `arena/`: routes parse the request, call the core, and render HTML with the
standard library (every interpolated string escaped). It reads the store and never writes it; a signed-in user's
submissions go through its proxy of the public API (`web/api_proxy.py`). Never imports discord.py or torch.
"""
