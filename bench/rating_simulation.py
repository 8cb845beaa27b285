"""Contest ratings against players whose true skill is known: is the ±2·RD interval honest, and do ratings rank?

    python bench/rating_simulation.py --out bench/results/rating_simulation.txt

Each scenario draws a pool of players with true skills (Gaussian around 1500), then runs contests: a random
subset of the pool enters, each entrant performs at their skill plus logistic noise of standard deviation β (the
model `core.rating` assumes), and the standings order the performances. The contests are rated by
`core.rating.rate_contest`, and every rated player who sat a contest out is aged by `core.rating.age`, as
`core.contests.ratings` does in the store. Skills may drift between contests by a Gaussian step.

Measured, over every rated player after every contest (and, separately, after the last one):
- **coverage**: how often the true skill lies within rating ± 2·RD. A calibrated RD gives about 95 %.
- **Spearman**: the rank correlation between the ratings and the true skills of the rated players.
- the median RD, the standard deviation of the ratings, and the root-mean-square error |rating − skill|.

The pure-noise scenario gives every player the same skill, so the places are noise: the ratings must spread no
further than their RDs say (coverage at or above nominal, median RD above the ratings' spread).

Everything is seeded: the same command prints the same numbers on any machine.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.rating import DRIFT, LIMIT_RD, METHOD, PERFORMANCE_SD, Rating, Standing, age, rate_contest  # noqa: E402


@dataclass(frozen=True)
class Scenario:
    name: str
    players: int
    contests: int
    # Entrants per contest, drawn uniformly from this range (at most the pool).
    entrants: tuple[int, int]
    # The true skills' standard deviation around 1500; 0 makes every place pure noise.
    skill_sd: float
    # The true skill's Gaussian step per contest (every player, entrant or not).
    drift: float = 0.0
    # With drift: whether the skills also revert towards 1500 so that their spread stays `skill_sd` (a population
    # that changes individually but not as a whole); without, each skill is a free random walk and the field
    # spreads further every contest.
    stationary: bool = True
    seed: int = 20261125


@dataclass(frozen=True)
class Outcome:
    scenario: Scenario
    rated: int
    coverage_all: float  # over every rated player after every contest
    coverage_final: float  # over the rated players after the last contest
    spearman: float | None  # None when every skill is equal
    median_rd: float
    rating_sd: float
    rms_error: float
    seconds: float


SCENARIOS = (
    Scenario("static skills, 2-100 entrants", players=300, contests=40, entrants=(2, 100), skill_sd=350),
    Scenario("static skills, 10-60 entrants", players=200, contests=60, entrants=(10, 60), skill_sd=350),
    Scenario("drifting skills, stationary field", players=200, contests=60, entrants=(10, 60), skill_sd=350, drift=35),
    Scenario(
        "drifting skills, spreading field",
        players=200,
        contests=60,
        entrants=(10, 60),
        skill_sd=350,
        drift=35,
        stationary=False,
    ),
    Scenario("narrow field (skill sd 150)", players=200, contests=60, entrants=(10, 60), skill_sd=150),
    Scenario("pure noise, 2-100 entrants", players=300, contests=40, entrants=(2, 100), skill_sd=0),
    Scenario("pure noise, 10-60 entrants", players=200, contests=60, entrants=(10, 60), skill_sd=0),
)


def simulate(scenario: Scenario) -> Outcome:
    """Run the scenario's contests through the rating and measure it against the true skills."""
    started = time.perf_counter()
    rng = random.Random(scenario.seed)
    skills = [rng.gauss(1500, scenario.skill_sd) for _ in range(scenario.players)]
    ratings: dict[int, Rating] = {}
    covered = checked = 0
    # A logistic distribution with standard deviation β has scale β·√3/π.
    scale = PERFORMANCE_SD * math.sqrt(3) / math.pi
    for _ in range(scenario.contests):
        low, high = scenario.entrants
        entrants = rng.sample(range(scenario.players), min(rng.randint(low, high), scenario.players))
        performances = {p: skills[p] + scale * _logit(rng.random()) for p in entrants}
        order = sorted(entrants, key=lambda p: -performances[p])
        after = rate_contest([Standing(p, place) for place, p in enumerate(order, start=1)], ratings)
        if after:
            for player in ratings.keys() - after.keys():
                ratings[player] = age(ratings[player])
            ratings.update(after)
        for player, rating in ratings.items():
            checked += 1
            covered += abs(rating.rating - skills[player]) <= 2 * rating.rd
        if scenario.drift:
            keep = math.sqrt(1 - (scenario.drift / scenario.skill_sd) ** 2) if scenario.stationary else 1.0
            skills = [1500 + keep * (s - 1500) + rng.gauss(0, scenario.drift) for s in skills]
    players = sorted(ratings)
    estimates = [ratings[p].rating for p in players]
    truths = [skills[p] for p in players]
    errors = [e - t for e, t in zip(estimates, truths, strict=True)]
    covered_at_end = sum(abs(err) <= 2 * ratings[p].rd for p, err in zip(players, errors, strict=True))
    return Outcome(
        scenario=scenario,
        rated=len(players),
        coverage_all=covered / checked,
        coverage_final=covered_at_end / len(players),
        spearman=spearman(estimates, truths) if scenario.skill_sd > 0 else None,
        median_rd=statistics.median(ratings[p].rd for p in players),
        rating_sd=statistics.pstdev(estimates),
        rms_error=math.sqrt(statistics.fmean(e * e for e in errors)),
        seconds=time.perf_counter() - started,
    )


def _logit(u: float) -> float:
    # random() may return exactly 0; the logistic quantile is infinite there, so that draw is nudged inwards.
    u = min(max(u, 1e-12), 1 - 1e-12)
    return math.log(u / (1 - u))


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Spearman's rank correlation: Pearson's correlation of the ranks (tied values share their mean rank)."""
    rx, ry = _ranks(xs), _ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    return cov / math.sqrt(sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry))


def _ranks(values: Sequence[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def report(outcomes: Sequence[Outcome]) -> str:
    legend = [
        f"core.rating: {METHOD}, beta {PERFORMANCE_SD:g}, RD limit {LIMIT_RD:g}, drift {DRIFT:.1f} per rated contest",
        "cover: share of rated players whose true skill lies within rating +- 2 RD (nominal about 0.95),",
        "  over every rated player after every contest (all) and after the last contest (end)",
        "",
    ]
    header = (
        f"{'scenario':<34} {'rated':>5} {'cover(all)':>10} {'cover(end)':>10} {'spearman':>8} "
        f"{'median RD':>9} {'rating sd':>9} {'RMS err':>7} {'s':>5}"
    )
    lines = [*legend, header, "-" * len(header)]
    for o in outcomes:
        rho = "-" if o.spearman is None else f"{o.spearman:.3f}"
        lines.append(
            f"{o.scenario.name:<34} {o.rated:>5} {o.coverage_all:>10.3f} {o.coverage_final:>10.3f} {rho:>8} "
            f"{o.median_rd:>9.1f} {o.rating_sd:>9.1f} {o.rms_error:>7.1f} {o.seconds:>5.1f}"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="also write the report here")
    args = parser.parse_args()
    text = report([simulate(s) for s in SCENARIOS])
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
