"""JSON payloads as Discord sends them, built from the fake's entities.

REST bodies follow the response schemas of the OpenAPI spec (the server checks each one it sends). Gateway
payloads are the REST objects plus the gateway-only fields discord.py reads (GUILD_CREATE's members and
channels, READY's session fields), as the Gateway documentation describes them.
"""

from __future__ import annotations

import logging
from typing import Any

from .models import (
    DM,
    EPHEMERAL,
    FakeChannel,
    FakeGuild,
    FakeRole,
    FakeUser,
    StoredFile,
)

log = logging.getLogger(__name__)

# Flags a bot may set on a message it sends: SUPPRESS_EMBEDS, EPHEMERAL, SUPPRESS_NOTIFICATIONS, IS_COMPONENTS_V2.
SETTABLE_FLAGS = (1 << 2) | EPHEMERAL | (1 << 12) | (1 << 15)
ATTACHMENT_SIZE_LIMIT = 10 * 1024 * 1024


def strip_nulls(value: Any) -> Any:
    """Drop null members from objects, recursively: Discord omits what a request left null."""
    if isinstance(value, dict):
        return {k: strip_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [strip_nulls(v) for v in value]
    return value


def user_payload(user: FakeUser) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "id": user.id,
        "username": user.username,
        "avatar": None,
        "discriminator": "0",
        "public_flags": 0,
        "flags": 0,
        "global_name": user.global_name,
        "primary_guild": None,
        "avatar_decoration_data": None,
        "collectibles": None,
        "banner": None,
        "accent_color": None,
    }
    if user.bot:
        payload["bot"] = True
    return payload


def private_user_payload(user: FakeUser) -> dict[str, Any]:
    """The bot's own user, as `GET /users/@me` and READY give it."""
    return {**user_payload(user), "mfa_enabled": True, "locale": "en-US", "verified": True, "email": None}


def member_payload(guild: FakeGuild, user: FakeUser, *, with_permissions: bool = False) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "avatar": None,
        "banner": None,
        "communication_disabled_until": None,
        "flags": 0,
        "joined_at": user.joined_at,
        "nick": user.nick,
        "pending": False,
        "premium_since": None,
        "roles": list(user.role_ids),
        "user": user_payload(user),
        "mute": False,
        "deaf": False,
    }
    if with_permissions:
        payload["permissions"] = str(guild.permissions_of(user))
    return payload


def role_payload(role: FakeRole) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "id": role.id,
        "name": role.name,
        "permissions": str(role.permissions),
        "position": role.position,
        "color": role.color,
        "colors": {"primary_color": role.color, "secondary_color": None, "tertiary_color": None},
        "hoist": False,
        "managed": role.bot_id is not None,
        "mentionable": False,
        "icon": None,
        "unicode_emoji": None,
        "flags": 0,
    }
    if role.bot_id is not None:
        payload["tags"] = {"bot_id": role.bot_id}
    return payload


def channel_payload(channel: FakeChannel) -> dict[str, Any]:
    if channel.type == DM:
        recipients = [user_payload(channel.recipient)] if channel.recipient else []
        return {"id": channel.id, "type": DM, "last_message_id": None, "flags": 0, "recipients": recipients}
    return {
        "id": channel.id,
        "type": channel.type,
        "last_message_id": None,
        "flags": 0,
        "guild_id": channel.guild_id,
        "name": channel.name,
        "parent_id": None,
        "rate_limit_per_user": 0,
        "topic": channel.topic,
        "position": channel.position,
        "permission_overwrites": [],
        "nsfw": False,
    }


def guild_payload(guild: FakeGuild, *, with_counts: bool = False) -> dict[str, Any]:
    """A guild as `GET /guilds/{id}` returns it (GuildWithCountsResponse)."""
    payload: dict[str, Any] = {
        "id": guild.id,
        "name": guild.name,
        "icon": None,
        "description": None,
        "home_header": None,
        "splash": None,
        "discovery_splash": None,
        "features": [],
        "banner": None,
        "owner_id": guild.owner_id,
        "application_id": None,
        "region": "deprecated",
        "afk_channel_id": None,
        "afk_timeout": 300,
        "system_channel_id": guild.channels[0].id if guild.channels else None,
        "system_channel_flags": 0,
        "widget_enabled": False,
        "widget_channel_id": None,
        "verification_level": 0,
        "roles": [role_payload(r) for r in guild.roles],
        "default_message_notifications": 1,
        "mfa_level": 0,
        "explicit_content_filter": 0,
        "max_presences": None,
        "max_members": 500000,
        "max_stage_video_channel_users": 50,
        "max_video_channel_users": 25,
        "vanity_url_code": None,
        "premium_tier": 0,
        "premium_subscription_count": 0,
        "preferred_locale": guild.locale,
        "rules_channel_id": None,
        "safety_alerts_channel_id": None,
        "public_updates_channel_id": None,
        "premium_progress_bar_enabled": False,
        "nsfw": False,
        "nsfw_level": 0,
        "emojis": [],
        "stickers": [],
        "incidents_data": None,
    }
    if with_counts:
        payload["approximate_member_count"] = len(guild.members)
        payload["approximate_presence_count"] = 0
    return payload


def guild_create_payload(guild: FakeGuild, joined_at: str) -> dict[str, Any]:
    """GUILD_CREATE: the guild plus the gateway-only lists discord.py builds its cache from."""
    return {
        **guild_payload(guild),
        "joined_at": joined_at,
        "large": False,
        "unavailable": False,
        "member_count": len(guild.members),
        "members": [member_payload(guild, user) for user in guild.members.values()],
        "channels": [channel_payload(c) for c in guild.channels],
        "threads": [],
        "presences": [],
        "voice_states": [],
        "stage_instances": [],
        "guild_scheduled_events": [],
        "soundboard_sounds": [],
        "lazy": True,
    }


def application_payload(app_id: str, bot: FakeUser, owner: FakeUser, flags: int) -> dict[str, Any]:
    """The bot's application (PrivateApplicationResponse), for `GET /applications/@me` and `/oauth2/...`."""
    return {
        "id": app_id,
        "name": bot.username,
        "icon": None,
        "description": "A fake application for tests.",
        "type": None,
        "bot": user_payload(bot),
        "summary": "",
        "rpc_origins": [],
        "bot_public": False,
        "bot_require_code_grant": False,
        "verify_key": "0" * 64,
        "flags": flags,
        "flags_new": str(flags),
        "redirect_uris": [],
        "interactions_endpoint_url": None,
        "role_connections_verification_url": None,
        "owner": user_payload(owner),
        "approximate_guild_count": 1,
        "approximate_user_install_count": 0,
        "approximate_user_authorization_count": 0,
        "explicit_content_filter": 0,
        "team": None,
        "eligible_oauth2_scopes": ["bot", "applications.commands"],
        "install_params": {"scopes": ["bot", "applications.commands"], "permissions": "0"},
        "integration_types_config": {"0": {}},
    }


def command_payload(
    request: dict[str, Any], *, command_id: str, app_id: str, guild_id: str | None, version: str
) -> dict[str, Any]:
    """A stored application command (ApplicationCommandResponse) from one bulk-overwrite entry."""
    body = strip_nulls(request)
    permissions = request.get("default_member_permissions")
    payload: dict[str, Any] = {
        **body,
        "id": command_id,
        "application_id": app_id,
        "version": version,
        "default_member_permissions": None if permissions is None else str(permissions),
        "type": body.get("type", 1),
        "description": body.get("description", ""),
        "nsfw": body.get("nsfw", False),
    }
    if guild_id is not None:
        payload["guild_id"] = guild_id
    return payload


def attachment_payload(stored: StoredFile, *, ephemeral: bool = False) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "id": stored.id,
        "filename": stored.filename,
        "size": stored.size,
        "url": stored.url,
        "proxy_url": stored.url,
    }
    if stored.content_type:
        payload["content_type"] = stored.content_type
    if stored.description:
        payload["description"] = stored.description
    if ephemeral:
        payload["ephemeral"] = True
    return payload


def embeds_payload(embeds: list[dict[str, Any]] | None, files: list[StoredFile]) -> list[dict[str, Any]]:
    """Embeds as Discord echoes them: nulls dropped, `type` "rich", `attachment://name` made a CDN URL."""
    urls = {f"attachment://{f.filename}": f.url for f in files}
    result = []
    for embed in strip_nulls(embeds or []):
        embed.setdefault("type", "rich")
        for field_ in embed.get("fields", []):
            field_.setdefault("inline", False)
        for key in ("image", "thumbnail"):
            media = embed.get(key)
            if isinstance(media, dict) and media.get("url") in urls:
                media["url"] = media["proxy_url"] = urls[media["url"]]
        result.append(embed)
    return result


def components_payload(components: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """Components as Discord echoes them: nulls dropped and every component numbered (`id`), depth first."""
    counter = 0

    def number(component: dict[str, Any]) -> dict[str, Any]:
        nonlocal counter
        counter += 1
        component.setdefault("id", counter)
        for child in component.get("components", []):
            number(child)
        if isinstance(component.get("accessory"), dict):
            number(component["accessory"])
        return component

    return [number(c) for c in strip_nulls(components or [])]
