"""Contest ratings: Glicko-2, applied to a contest's final standings when the contest ends.

The arithmetic is Glicko-2 exactly as published in Mark Glickman, "Example of the Glicko-2 system" (Boston
University, 2012; glicko.net/glicko/glicko2.pdf): steps 2 to 8, with the volatility found by the Illinois
algorithm of step 5 (ε = 0.000001). Each step is marked below so the code can be checked against the paper.

A contest is one rating period among many players. Its results come from the final standings: every pair of
rated participants is one game, the better place winning (1 and 0) and equal places tying (0.5 each). All of a
player's games in the contest go into ONE period update, against the opponents' pre-contest ratings. That is
the paper's own shape (all games of a period are rated against ratings from before the period), so the result
does not depend on the order players are processed in and nobody is rated against a rating this contest has
already moved.

Reducing a ranking of N players to its N(N-1)/2 pairwise outcomes is the standard way to rate many-player
rounds with a two-player model: the Elo-based contest ratings of Codeforces and CodeChef compute each
contestant's expected rank from their win probabilities against every other contestant; Weng and Lin, "A
Bayesian Approximation Method for Online Ranking" (JMLR 12, 2011), call it the Bradley-Terry full-pair model;
and Ebtekar and Liu, "Elo-MMR: A Rating System for Massive Multiplayer Competitions" (WWW 2021), use all-pairs
Glicko as the baseline for exactly such contests. Its known weakness is that a player's N-1 games all come from
one performance yet count as independent evidence, so a large contest moves ratings further than N-1 separate
games would. Elo-MMR models that directly and could replace the arithmetic behind `rate_contest` if contests
grow to hundreds of players; the work here is O(N²) per contest, fine at that size too.

Two guards the paper leaves to the system. The volatility never exceeds `MAX_VOLATILITY` (0.15, two and a half
times a newcomer's): all-pairs games make a contest's variance v small, so one performance far from a player's
rating found a volatility of 0.9 to 1.3 in a single step, and over 24 weekly contests of inconsistent results
(bench/web_pages.py's seeded store) ratings climbed past 20,000. And when every expected score of a player's games
rounds to exactly 0 or 1 in floating point, the games carry no information the arithmetic can use (v would be
1/0): the period only ages that rating.

Callers pass only frozen results (the final standings once the contest has ended); nothing here reads live
scores. Nothing here touches the database or Discord either: the store keeps the ratings and the contest code
decides when to call `rate_contest` and, for players who sat a period out, `age`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, NamedTuple, TypeVar

# Step 1 of the paper: what a newcomer starts with. The rating and RD are on the familiar Glicko scale.
DEFAULT_RATING = 1500.0
DEFAULT_RD = 350.0
DEFAULT_VOLATILITY = 0.06
DEFAULT_TAU = 0.5

# Step 2: the factor between the Glicko scale and the Glicko-2 scale (400 / ln 10).
SCALE = 173.7178
# Step 5: how close the Illinois algorithm brings the volatility's bracket before it stops.
CONVERGENCE = 0.000001

# RD never exceeds a newcomer's: long inactivity returns a player to "unknown", not beyond it. Glickman's
# Glicko-1 paper caps the pre-period RD at 350 the same way; the Glicko-2 paper leaves the cap to the system.
MAX_RD = DEFAULT_RD
# The most a volatility may become (see the module's docstring): a cap on step 5's result.
MAX_VOLATILITY = 0.15

PlayerId = TypeVar("PlayerId", bound=Hashable)


@dataclass(frozen=True)
class Rating:
    """A player's Glicko-2 state on the Glicko scale: `rating` is the estimate, `rd` its standard deviation
    (ratings deviation) and `volatility` how erratic the player's results are."""

    rating: float = DEFAULT_RATING
    rd: float = DEFAULT_RD
    volatility: float = DEFAULT_VOLATILITY

    def __post_init__(self) -> None:
        # A zero RD or volatility divides by zero in steps 5 and 7, and a stored NaN would spread to everyone
        # who played against it, so a bad value is refused where it enters.
        if not math.isfinite(self.rating):
            raise ValueError(f"A rating must be a finite number, not {self.rating}.")
        if not (math.isfinite(self.rd) and self.rd > 0):
            raise ValueError(f"A rating's RD must be a positive number, not {self.rd}.")
        if not (math.isfinite(self.volatility) and self.volatility > 0):
            raise ValueError(f"A rating's volatility must be a positive number, not {self.volatility}.")


class Game(NamedTuple):
    """One game of a rating period, from the rated player's side: the opponent's pre-period rating and the
    player's score (1 a win, 0.5 a tie, 0 a loss)."""

    opponent: Rating
    score: float


class Standing(NamedTuple, Generic[PlayerId]):
    """A player's final place in a contest: 1 is best, equal places are ties, gaps do not matter."""

    player_id: PlayerId
    place: int


def conservative_rating(rating: Rating) -> float:
    """`rating - 2·RD`: a value the player's true strength is very likely (about 95 %) above, for leaderboards.

    Ranking by the estimate alone puts a newcomer who won one contest above players proven over many; ranking by
    this lower bound makes a player climb as their RD shrinks, as well as by winning. A newcomer shows 800."""
    return rating.rating - 2 * rating.rd


def age(rating: Rating) -> Rating:
    """The rating after a period without games: only the RD grows (paper, step 6), up to `MAX_RD`."""
    phi_star = _pre_period_phi(rating.rd / SCALE, rating.volatility)
    return Rating(rating.rating, phi_star * SCALE, rating.volatility)


def rate_period(player: Rating, games: Sequence[Game], *, tau: float = DEFAULT_TAU) -> Rating:
    """The player's rating after one rating period with these games (paper, steps 2 to 8).

    `tau` is the system constant that limits how fast the volatility changes; the paper suggests 0.3 to 1.2.
    A period without games only ages the rating."""
    if not (math.isfinite(tau) and tau > 0):
        raise ValueError(f"The system constant tau must be a positive number, not {tau}.")
    if not games:
        return age(player)
    for game in games:
        if not 0 <= game.score <= 1:
            raise ValueError(f"A game's score must be between 0 and 1, not {game.score}.")

    # Step 2: onto the Glicko-2 scale.
    mu, phi = (player.rating - DEFAULT_RATING) / SCALE, player.rd / SCALE
    # Steps 3 and 4: the estimated variance v from the games alone, and the estimated improvement Δ.
    information, improvement = 0.0, 0.0
    for opponent, score in games:
        g = _g(opponent.rd / SCALE)
        expected = _expected(mu, (opponent.rating - DEFAULT_RATING) / SCALE, g)
        information += g * g * expected * (1 - expected)
        improvement += g * (score - expected)
    if information == 0:
        return age(player)  # every expectation rounded to 0 or 1: nothing here to learn from
    v = 1 / information
    delta = v * improvement
    # Step 5: the new volatility, capped.
    sigma = min(_new_volatility(phi, player.volatility, v, delta, tau), MAX_VOLATILITY)
    # Step 6: the pre-period RD, then step 7: the new RD and rating.
    phi_star = _pre_period_phi(phi, sigma)
    new_phi = 1 / math.sqrt(1 / phi_star**2 + 1 / v)
    new_mu = mu + new_phi**2 * improvement
    # Step 8: back to the Glicko scale.
    return Rating(new_mu * SCALE + DEFAULT_RATING, new_phi * SCALE, sigma)


def rate_contest(
    standings: Sequence[Standing[PlayerId]],
    ratings: Mapping[PlayerId, Rating],
    *,
    tau: float = DEFAULT_TAU,
) -> dict[PlayerId, Rating]:
    """Every participant's rating after the contest, keyed like `standings` and in its order.

    `ratings` holds the pre-contest ratings; a participant missing from it is a newcomer and starts at the
    defaults. Players in `ratings` who are not in `standings` are neither touched nor returned (`age` them if
    the contest should count as a period they sat out). With fewer than two participants nobody played a game,
    so nobody is rated: the result is empty, and a lone participant's rating is left as it was rather than aged,
    since they did take part."""
    _check(standings)
    if len(standings) < 2:
        return {}
    before = [ratings.get(standing.player_id, Rating()) for standing in standings]
    places = [standing.place for standing in standings]
    return {
        standing.player_id: rate_period(before[i], list(_games(i, places, before)), tau=tau)
        for i, standing in enumerate(standings)
    }


def _check(standings: Sequence[Standing[PlayerId]]) -> None:
    for player_id, place in standings:
        if place < 1:
            raise ValueError(f"Places start at 1 (the best); player {player_id!r} has place {place}.")
    repeated = [player_id for player_id, count in Counter(s.player_id for s in standings).items() if count > 1]
    if repeated:
        listed = ", ".join(repr(player_id) for player_id in repeated)
        raise ValueError(f"Each player may appear once in a contest's standings; repeated: {listed}.")


def _games(player: int, places: Sequence[int], before: Sequence[Rating]) -> Iterable[Game]:
    """The player's game against every other participant, scored by comparing places."""
    for other, opponent in enumerate(before):
        if other == player:
            continue
        mine, theirs = places[player], places[other]
        yield Game(opponent, 1.0 if mine < theirs else 0.0 if mine > theirs else 0.5)


def _g(phi: float) -> float:
    """Step 3: how much a game counts, less the less certain the opponent's rating is."""
    return 1 / math.sqrt(1 + 3 * phi * phi / math.pi**2)


def _expected(mu: float, opponent_mu: float, g: float) -> float:
    """Step 3: the player's expected score against the opponent."""
    return 1 / (1 + math.exp(-g * (mu - opponent_mu)))


def _pre_period_phi(phi: float, sigma: float) -> float:
    """Step 6: the RD grown by one period's volatility, capped at `MAX_RD`."""
    return min(math.sqrt(phi * phi + sigma * sigma), MAX_RD / SCALE)


def _new_volatility(phi: float, sigma: float, v: float, delta: float, tau: float) -> float:
    """Step 5: σ′, the root of f by the Illinois algorithm (a regula falsi that halves a stale end's value)."""
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta * delta - phi * phi - v - ex) / (2 * (phi * phi + v + ex) ** 2) - (x - a) / tau**2

    # 5.2: bracket the root between A and B.
    big_a = a
    if delta * delta > phi * phi + v:
        big_b = math.log(delta * delta - phi * phi - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    # 5.3 and 5.4: narrow the bracket until it is shorter than ε.
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > CONVERGENCE:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2
        big_b, f_b = big_c, f_c
    # 5.5
    return math.exp(big_a / 2)
