"""The judge-launcher channel and shared buffers, across a real process boundary."""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator

import pytest
import torch

from runner.host.sandbox import PACKAGE_ROOT
from runner.ipc.channel import MAX_MESSAGE_BYTES, Channel, ChannelClosedError, ChannelProtocolError
from runner.ipc.shared_buffers import SharedArena


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    a, b = socket.socketpair()
    yield a, b
    a.close()
    b.close()


def test_messages_of_any_size_arrive_whole_and_in_order(pair):
    left, right = Channel(pair[0]), Channel(pair[1])
    big = "x" * (300 * 1024)  # bigger than a socket buffer: the reader must reassemble it
    import threading

    sender = threading.Thread(target=lambda: [left.send({"n": i, "text": big}) for i in range(3)])
    sender.start()
    received = [right.receive(5)[0] for _ in range(3)]
    sender.join()
    assert [m["n"] for m in received] == [0, 1, 2]
    assert all(m["text"] == big for m in received)


def test_a_closed_peer_and_a_silent_peer_are_told_apart(pair):
    a, b = pair
    right = Channel(b)
    with pytest.raises(TimeoutError):
        right.receive(0.05)
    a.close()
    with pytest.raises(ChannelClosedError):
        right.receive(1)


def test_an_oversized_length_prefix_is_a_protocol_error_not_an_allocation(pair):
    a, b = pair
    a.sendall((MAX_MESSAGE_BYTES + 1).to_bytes(4, "big"))
    with pytest.raises(ChannelProtocolError):
        Channel(b).receive(1)


def test_shared_cpu_buffer_written_by_another_process_is_seen_here():
    """The CPU equivalent of the GPU path: a memfd sent with SCM_RIGHTS, mapped by the child, written there."""
    arena = SharedArena.allocate(4096, "cpu")
    view = arena.view(256, (8,), torch.float32)
    view.fill_(float("nan"))
    ours, theirs = socket.socketpair()
    child = textwrap.dedent(
        f"""
        import sys, socket, torch
        sys.path.insert(0, {str(PACKAGE_ROOT)!r})
        from runner.ipc.channel import Channel
        from runner.ipc.shared_buffers import SharedArena
        channel = Channel(socket.socket(fileno={theirs.fileno()}))
        message, fds = channel.receive(30)
        arena = SharedArena.open(fds[0], message["size"], "cpu")
        arena.view(256, (8,), torch.float32).copy_(torch.arange(8, dtype=torch.float32) * 2)
        channel.send({{"done": True}})
        channel.close()
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", child], pass_fds=(theirs.fileno(),))
    theirs.close()
    channel = Channel(ours)
    channel.send({"size": arena.size}, (arena.fd,))
    reply, _ = channel.receive(60)
    assert proc.wait(60) == 0
    channel.close()
    assert reply == {"done": True}
    assert torch.equal(view, torch.arange(8, dtype=torch.float32) * 2)
    arena.close()


def test_a_view_outside_the_arena_is_refused():
    arena = SharedArena.allocate(1024, "cpu")
    with pytest.raises(ValueError):
        arena.view(512, (1024,), torch.float32)
    with pytest.raises(ValueError):
        arena.view(4, (1,), torch.float32)  # unaligned
