"""The Discord bot: a front end over the core. Its cogs parse a command's options, call one core flow and render the
result (`bot/ui/`); `runners.py` builds the runner backends it hands the core. Never imports torch."""
