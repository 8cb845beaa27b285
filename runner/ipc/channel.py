"""The judge-launcher channel: length-prefixed JSON messages on a Unix stream socket, with descriptors.

A message is a 4-byte big-endian length and that many bytes of JSON. File descriptors (the shared buffers)
ride on the length prefix as SCM_RIGHTS. The judge side reads with a timeout, so a launcher that hangs or
floods cannot stall it, and a message over `MAX_MESSAGE_BYTES` is a protocol error, never a buffer.
"""

from __future__ import annotations

import json
import socket
import struct
import time
from collections.abc import Sequence
from typing import Any

MAX_MESSAGE_BYTES = 4 * 1024 * 1024
MAX_FDS = 4
_HEADER = struct.Struct(">I")


class ChannelClosedError(ConnectionError):
    """The other side closed the channel (or died)."""


class ChannelProtocolError(ValueError):
    """The other side sent something that is not a message of this protocol."""


class Channel:
    """One end of the channel. Not thread-safe: one request at a time."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    @classmethod
    def from_fd(cls, fd: int) -> Channel:
        return cls(socket.socket(fileno=fd))

    def send(self, message: dict[str, Any], fds: Sequence[int] = ()) -> None:
        payload = json.dumps(message, separators=(",", ":")).encode()
        header = _HEADER.pack(len(payload))
        try:
            if fds:
                socket.send_fds(self.sock, [header], list(fds))
            else:
                self.sock.sendall(header)
            self.sock.sendall(payload)
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise ChannelClosedError("the other side of the channel is gone") from exc

    def receive(self, timeout: float | None = None) -> tuple[dict[str, Any], list[int]]:
        """The next message and any descriptors it carried; TimeoutError when none came within `timeout`."""
        deadline = None if timeout is None else time.monotonic() + timeout
        header, fds = self._read_header(deadline)
        (length,) = _HEADER.unpack(header)
        if length > MAX_MESSAGE_BYTES:
            raise ChannelProtocolError(f"a message of {length} bytes is over the {MAX_MESSAGE_BYTES} limit")
        payload = self._read_exact(length, deadline)
        try:
            message = json.loads(payload)
        except ValueError as exc:
            raise ChannelProtocolError("a message is not JSON") from exc
        if not isinstance(message, dict):
            raise ChannelProtocolError("a message is not a JSON object")
        return message, fds

    def close(self) -> None:
        self.sock.close()

    def _settimeout(self, deadline: float | None) -> None:
        if deadline is None:
            self.sock.settimeout(None)
            return
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("no message within the time allowed")
        self.sock.settimeout(remaining)

    def _read_header(self, deadline: float | None) -> tuple[bytes, list[int]]:
        self._settimeout(deadline)
        data, fds, _, _ = socket.recv_fds(self.sock, _HEADER.size, MAX_FDS)
        if not data:
            raise ChannelClosedError("the other side closed the channel")
        if len(data) < _HEADER.size:
            data += self._read_exact(_HEADER.size - len(data), deadline)
        return data, list(fds)

    def _read_exact(self, n: int, deadline: float | None) -> bytes:
        chunks = bytearray()
        while len(chunks) < n:
            self._settimeout(deadline)
            chunk = self.sock.recv(min(n - len(chunks), 1 << 20))
            if not chunk:
                raise ChannelClosedError("the other side closed the channel in the middle of a message")
            chunks += chunk
        return bytes(chunks)
