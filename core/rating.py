"""Contest ratings: Elo-MMR, applied to a contest's final standings when the contest ends.

The method is Elo-MMR from Aram Ebtekar and Paul Liu, "Elo-MMR: A Rating System for Massive Multiplayer
Competitions" (WWW 2021; arXiv:2101.00400), in the form its reference implementation (github.com/EbTech/Elo-MMR,
`multi-skill`) runs with the logistic performance model and the pseudo-diffusion parameter ρ = ∞: after every
contest a player's belief about their skill is collapsed into one Gaussian, so a rating is two numbers (the
estimate and its RD) that the store keeps. The model: each player's skill drifts by a Gaussian step of standard
deviation γ (`DRIFT`) every rating period; in a contest each entrant performs at their skill plus logistic noise
of standard deviation β (`PERFORMANCE_SD`); the standings order the performances. Each contest then rates every
entrant in two steps, both against everyone's pre-contest ratings, so the result does not depend on the order
players are processed in:

1. **Performance.** The entrant's performance p is the maximum-likelihood value given their place: the zero of the
   sum, over every entrant j (the player included, as a tie with themselves), of the log-likelihood's slope for
   "j finished above / level with / below a performance x", j's performance being logistic around j's rating with
   variance RD_j² + β² (`_performance`).
2. **Belief.** p is one observation of the skill with noise β: the new rating is the zero of the Gaussian prior's
   slope plus the logistic observation's (a robust average: one wild contest moves a rating a bounded amount,
   the paper's robustness), and the new RD is 1 / √(1/RD² + 1/β²).

So one contest is one observation, whatever the number of entrants. That is the point: the old method (Glicko-2
with every pair of entrants as a full game, until migration V008) counted N−1 games from one performance as
independent evidence, and a newcomer in a 100-player contest went from RD 350 to 52 at once. Here the RD after a
contest depends only on the RD before it: 350 → 174 after one contest, → 80 (`LIMIT_RD`) for a player who enters
every one. β = 200 and an RD limit of 80 are the reference implementation's defaults; γ follows from them
(γ² = 80⁴ / (200² − 80²), γ ≈ 34.9).

**A rating period is a rated contest** (not elapsed time): every rated player ages by one period whenever a
contest is rated, entrants before their update (Elo-MMR's diffusion) and everybody else instead of one (`age`:
RD² grows by γ², up to a newcomer's 350). Contests are the only evidence a rating has, so a rating is a function
of the ordered list of rated contests alone: re-rating the stored contests reproduces it, with no clock involved.
A skill may change as much between two contests a week apart as between two a month apart; that is the
simplification this choice accepts.

Elo-MMR has no volatility to estimate, so the old method's volatility iteration (the Illinois algorithm whose
exponentials overflowed with large improvements, behind a cap of 0.15) is gone. `Rating.volatility` keeps the
meaning Glicko-2's step 6 gives it: the skill's drift per period on the Glicko-2 scale (γ / 173.7178), the same
for every player under this method.

The work is O(N²) per contest (every entrant's performance sums over every entrant): on a 2-core machine 0.1 s
for 100 entrants, 0.7 s for 300 and 5.5 s for 1000.

Callers pass only frozen results (the final standings once the contest has ended); nothing here reads live
scores. Nothing here touches the database or Discord either: the store keeps the ratings, and the contest code
decides when to call `rate_contest` and, for the rated players who sat the contest out, `age`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, NamedTuple, TypeVar

# The label stored with every rating this module computes (rating_history.method), so that values of an earlier
# method, kept in rating_archive, are never mistaken for these.
METHOD = "elo-mmr"

# What a newcomer starts with, on the familiar Glicko scale.
DEFAULT_RATING = 1500.0
DEFAULT_RD = 350.0
# The factor between the Glicko scale and the Glicko-2 scale (400 / ln 10), in which `volatility` is expressed.
SCALE = 173.7178

# β: the standard deviation of one contest performance around the skill (the reference implementation's default).
PERFORMANCE_SD = 200.0
# The RD of a player who enters every contest settles here: one observation per period (1/β²) balances one
# period's drift. γ is chosen to make it so, as the reference implementation's `from_limit` does.
LIMIT_RD = 80.0
DRIFT = LIMIT_RD**2 / math.sqrt(PERFORMANCE_SD**2 - LIMIT_RD**2)
DEFAULT_VOLATILITY = DRIFT / SCALE

# RD never exceeds a newcomer's: long inactivity returns a player to "unknown", not beyond it.
MAX_RD = DEFAULT_RD

# A logistic distribution of standard deviation s has scale s·√3/π; the slopes below use its reciprocal.
_LOGISTIC = math.pi / math.sqrt(3)
# How close the root finder brings a performance or a rating (on the Glicko scale) before it stops.
_TOLERANCE = 1e-7

PlayerId = TypeVar("PlayerId", bound=Hashable)


@dataclass(frozen=True)
class Rating:
    """A player's rating on the Glicko scale: `rating` is the estimate of their skill, `rd` its standard deviation
    (ratings deviation), and `volatility` how far the skill may drift per period (Glicko-2's σ)."""

    rating: float = DEFAULT_RATING
    rd: float = DEFAULT_RD
    volatility: float = DEFAULT_VOLATILITY

    def __post_init__(self) -> None:
        # A zero RD divides by zero in the update, and a stored NaN would spread to everyone who played against
        # it, so a bad value is refused where it enters.
        if not math.isfinite(self.rating):
            raise ValueError(f"A rating must be a finite number, not {self.rating}.")
        if not (math.isfinite(self.rd) and self.rd > 0):
            raise ValueError(f"A rating's RD must be a positive number, not {self.rd}.")
        if not (math.isfinite(self.volatility) and self.volatility > 0):
            raise ValueError(f"A rating's volatility must be a positive number, not {self.volatility}.")


class Standing(NamedTuple, Generic[PlayerId]):
    """A player's final place in a contest: 1 is best, equal places are ties, gaps do not matter."""

    player_id: PlayerId
    place: int


def conservative_rating(rating: Rating) -> float:
    """`rating - 2·RD`: a value the player's true skill is very likely (about 95 %) above, for leaderboards.

    Ranking by the estimate alone puts a newcomer who won one contest above players proven over many; ranking by
    this lower bound makes a player climb as their RD shrinks, as well as by winning. A newcomer shows 800."""
    return rating.rating - 2 * rating.rd


def age(rating: Rating) -> Rating:
    """The rating one period later without a contest: only the RD grows, by the drift (RD² + (σ·SCALE)²), up to
    `MAX_RD`. It is Glicko-2's step 6 and Elo-MMR's diffusion alike."""
    return Rating(rating.rating, min(math.hypot(rating.rd, rating.volatility * SCALE), MAX_RD), rating.volatility)


def rate_contest(standings: Sequence[Standing[PlayerId]], ratings: Mapping[PlayerId, Rating]) -> dict[PlayerId, Rating]:
    """Every entrant's rating after the contest, keyed like `standings` and in its order.

    `ratings` holds the pre-contest ratings; an entrant missing from it is a newcomer and starts at the defaults.
    Players in `ratings` who are not in `standings` are neither touched nor returned: `age` them, since the
    contest is a period they sat out. A contest whose standings order nobody (fewer than two entrants, or all
    tied) carries no information; it is not a rating period at all: the result is empty, and nobody should be
    aged for it either."""
    _check(standings)
    if len({standing.place for standing in standings}) < 2:
        return {}
    # Everyone ages one period first (Elo-MMR's diffusion), and every performance is judged against these
    # pre-contest beliefs.
    before = [age(ratings.get(standing.player_id, Rating())) for standing in standings]
    opponents = [
        _Opponent(r.rating, _LOGISTIC / math.sqrt(r.rd**2 + PERFORMANCE_SD**2), s.place)
        for r, s in zip(before, standings, strict=True)
    ]
    return {
        standing.player_id: _observe(prior, _performance(standing.place, prior.rating, opponents))
        for standing, prior in zip(standings, before, strict=True)
    }


class _Opponent(NamedTuple):
    """An entrant as the others see them: a logistic performance around `mean`, with slope factor `weight`
    (π / (√3·√(RD² + β²)), the reciprocal of the distribution's scale), and their place."""

    mean: float
    weight: float
    place: int


def _performance(place: int, rating: float, opponents: Sequence[_Opponent]) -> float:
    """Step 1: the performance that makes the standings most likely, given everyone's pre-contest belief.

    For an opponent j whose performance is logistic with CDF F, finishing below j adds log(1 − F(x)) to the
    log-likelihood, finishing above adds log F(x), and a tie (the player with themselves included) adds the
    density's log. Their slopes are −w(1 + tanh z)/2, w(1 − tanh z)/2 and −w·tanh z, with z = w(x − μ_j)/2:
    bounded, and their sum falls strictly as x rises, so it has exactly one zero."""

    def slope(x: float) -> tuple[float, float]:
        total = derivative = 0.0
        for mean, weight, other in opponents:
            t = math.tanh(weight * (x - mean) / 2)
            curvature = weight * weight * (1 - t * t) / 2
            if other < place:
                total -= weight * (1 + t)
                derivative -= curvature
            elif other > place:
                total += weight * (1 - t)
                derivative -= curvature
            else:
                total -= 2 * weight * t
                derivative -= 2 * curvature
        return total, derivative

    return _zero_of_decreasing(slope, rating)


def _observe(prior: Rating, performance: float) -> Rating:
    """Step 2: the belief after one performance, observed with logistic noise of standard deviation β.

    The new rating is where the prior's slope −(x − μ)/RD² and the observation's −w·tanh(w(x − p)/2) cancel; the
    RD is the Gaussian update, as in the paper."""
    weight = _LOGISTIC / PERFORMANCE_SD
    precision = 1 / prior.rd**2

    def slope(x: float) -> tuple[float, float]:
        t = math.tanh(weight * (x - performance) / 2)
        return -(x - prior.rating) * precision - weight * t, -precision - weight * weight * (1 - t * t) / 2

    rating = _zero_of_decreasing(slope, prior.rating)
    rd = 1 / math.sqrt(precision + 1 / PERFORMANCE_SD**2)
    return Rating(rating, rd, prior.volatility)


def _zero_of_decreasing(f: Callable[[float], tuple[float, float]], start: float) -> float:
    """The zero of a strictly decreasing function given with its derivative: Newton's steps from `start`, kept
    inside a bracket that each step narrows, with a bisection wherever a step would leave it.

    Everything evaluated is a tanh or a product of finite numbers, so nothing here can overflow, whatever the
    ratings."""
    low, high = start - 1000.0, start + 1000.0
    while f(low)[0] < 0:
        low -= 2 * (high - low)
    while f(high)[0] > 0:
        high += 2 * (high - low)
    x = start
    for _ in range(200):
        value, derivative = f(x)
        if value == 0:
            return x
        if value > 0:
            low = x
        else:
            high = x
        step = x - value / derivative if derivative < 0 else math.nan
        following = step if low < step < high else (low + high) / 2
        if abs(following - x) < _TOLERANCE or high - low < _TOLERANCE:
            return following
        x = following
    return x


def _check(standings: Sequence[Standing[PlayerId]]) -> None:
    for player_id, place in standings:
        if place < 1:
            raise ValueError(f"Places start at 1 (the best); player {player_id!r} has place {place}.")
    repeated = [player_id for player_id, count in Counter(s.player_id for s in standings).items() if count > 1]
    if repeated:
        listed = ", ".join(repr(player_id) for player_id in repeated)
        raise ValueError(f"Each player may appear once in a contest's standings; repeated: {listed}.")
