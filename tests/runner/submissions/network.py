"""Tries to reach the runner's own port on 127.0.0.1 and says what happened."""

import socket

PORT = int("__PORT__")


def solution(input_a, input_b, output_c, n):
    try:
        with socket.create_connection(("127.0.0.1", PORT), timeout=3):
            raise RuntimeError("CONNECTED to the runner")
    except OSError as exc:
        raise RuntimeError(f"network blocked: {exc}") from None
