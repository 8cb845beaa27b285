"""The Discord bot, its Discord-free core and the Postgres store. Never imports torch."""
