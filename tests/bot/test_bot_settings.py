"""The bot's settings refuse a configuration that still lists runners, and say what replaces the list."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from bot.bot_settings import RUNNERS_REMOVED, BotSettings

OLD_ENTRY = {"name": "h100-box", "url": "https://gpu-a.internal:8700", "gpu_type": "h100", "slots": 1}


def test_a_static_runner_list_is_refused_with_what_replaces_it() -> None:
    with pytest.raises(ValidationError) as refused:
        BotSettings(token="not-a-real-token", runners=[OLD_ENTRY])
    assert RUNNERS_REMOVED in str(refused.value)
    assert "arena runner serve --join" in RUNNERS_REMOVED and "arena fleet token create" in RUNNERS_REMOVED


def test_arena_bot_runners_in_the_environment_is_refused_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_BOT_RUNNERS", '[{"name": "h100-box", "url": "https://gpu-a.internal:8700"}]')
    with pytest.raises(ValidationError) as refused:
        BotSettings(token="not-a-real-token")
    assert RUNNERS_REMOVED in str(refused.value)


def test_without_runners_the_settings_stand() -> None:
    settings = BotSettings(token="not-a-real-token", local_runner="off")
    assert settings.runners is None and settings.fleet == "auto"
