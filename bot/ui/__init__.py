"""Pure rendering for Discord: embeds and charts built from core data, testable without a client."""
