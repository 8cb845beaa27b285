"""Never returns from the first call."""


def solution(input_a, input_b, output_c, n):
    while True:
        pass
