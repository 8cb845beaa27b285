"""One reader of a server-sent event stream for the store's API tests: the frames that carry data, as
(SSE id, event name, decoded data), until a count of them or the end of the stream."""

from __future__ import annotations

import json
from typing import Any

import aiohttp


async def read_frames(response: aiohttp.ClientResponse, count: int | None = None) -> list[tuple[str | None, str, Any]]:
    """(SSE id, event, data) of each frame with data, until `count` of them or the end of the stream. Comment lines
    (the server's keep-alives) are skipped."""
    assert response.status == 200 and response.content_type == "text/event-stream"
    frames: list[tuple[str | None, str, Any]] = []
    frame: dict[str, str] = {}
    async for raw in response.content:
        line = raw.decode().rstrip("\n")
        if line:
            if not line.startswith(":"):
                key, _, value = line.partition(": ")
                frame[key] = value
            continue
        if "data" in frame:
            frames.append((frame.get("id"), frame["event"], json.loads(frame["data"])))
            if count is not None and len(frames) == count:
                return frames
        frame = {}
    return frames
