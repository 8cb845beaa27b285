"""The Discord-free core: what the bot, the CLI and the tests call. Imports neither discord nor torch."""
