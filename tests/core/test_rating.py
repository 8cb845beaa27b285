"""Elo-MMR on contest standings: one contest is one observation, absent players age, nothing overflows, and on
players whose true skill is known the ±2·RD interval covers it about as often as it claims."""

from __future__ import annotations

import importlib.util
import math
import random
import sys
from pathlib import Path
from types import ModuleType

import pytest

from core.rating import (
    DEFAULT_RD,
    DEFAULT_VOLATILITY,
    DRIFT,
    LIMIT_RD,
    MAX_RD,
    PERFORMANCE_SD,
    SCALE,
    Rating,
    Standing,
    age,
    conservative_rating,
    rate_contest,
)

ROOT = Path(__file__).resolve().parents[2]
# The RD of anyone's first contest, whatever its size: 1 / √(1/350² + 1/β²).
FIRST_RD = 1 / math.sqrt(1 / DEFAULT_RD**2 + 1 / PERFORMANCE_SD**2)


def _simulation() -> ModuleType:
    """bench/rating_simulation.py, which is a script and not a package module, loaded from its file."""
    name = "rating_simulation_under_test"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / "rating_simulation.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while the file executes
        spec.loader.exec_module(module)
    return sys.modules[name]


def test_the_drift_makes_a_regular_entrants_rd_settle_at_the_limit():
    # γ is chosen so that one observation (1/β²) balances one period's drift at RD = LIMIT_RD.
    assert 1 / (LIMIT_RD**2 + DRIFT**2) + 1 / PERFORMANCE_SD**2 == pytest.approx(1 / LIMIT_RD**2)
    assert DEFAULT_VOLATILITY * SCALE == pytest.approx(DRIFT)
    ratings: dict[str, Rating] = {}
    for contest in range(60):
        ratings.update(rate_contest([Standing("ada", 1 + contest % 2), Standing("bob", 2 - contest % 2)], ratings))
    assert ratings["ada"].rd == pytest.approx(LIMIT_RD, rel=1e-3)


@pytest.mark.parametrize("entrants", [2, 10, 100])
def test_a_newcomers_first_contest_is_one_observation_whatever_its_size(entrants: int):
    # All-pairs Glicko-2 counted N-1 full games: a newcomer in a 100-player contest went from RD 350 to 52.
    after = rate_contest([Standing(i, i + 1) for i in range(entrants)], {})
    assert {round(r.rd, 9) for r in after.values()} == {round(FIRST_RD, 9)}
    assert FIRST_RD == pytest.approx(173.65, abs=0.01)


def test_between_equal_newcomers_the_winner_gains_what_the_loser_loses():
    after = rate_contest([Standing("ada", 1), Standing("bob", 2)], {})
    gain, loss = after["ada"].rating - 1500, 1500 - after["bob"].rating
    assert gain > 0
    assert gain == pytest.approx(loss, rel=1e-9)
    assert after["ada"].rd == after["bob"].rd


def test_equal_players_end_ordered_like_their_places_and_the_result_follows_the_standings_order():
    after = rate_contest([Standing("cy", 3), Standing("ada", 1), Standing("dee", 4), Standing("bob", 2)], {})
    assert sorted(after, key=lambda p: after[p].rating, reverse=True) == ["ada", "bob", "cy", "dee"]
    assert list(after) == ["cy", "ada", "dee", "bob"]


def test_the_order_players_are_listed_in_does_not_change_anyones_rating():
    before = {i: Rating(1300 + 40 * i, 60 + 9 * i) for i in range(12)}
    standings = [Standing(i, 1 + (i * 7) % 12) for i in range(12)]
    shuffled = standings[:]
    random.Random(7).shuffle(shuffled)
    assert rate_contest(standings, before) == rate_contest(shuffled, before)


def test_tied_places_rate_equal_players_equally():
    after = rate_contest([Standing("ada", 1), Standing("bob", 2), Standing("cy", 2), Standing("dee", 4)], {})
    assert after["bob"] == after["cy"]
    assert after["ada"].rating > after["bob"].rating > after["dee"].rating


def test_standings_that_order_nobody_rate_nobody():
    assert rate_contest([], {"ada": Rating(1600, 100)}) == {}
    assert rate_contest([Standing("ada", 1)], {"ada": Rating(1600, 100)}) == {}
    assert rate_contest([Standing("ada", 3), Standing("bob", 3)], {}) == {}


def test_an_upset_moves_every_rating_more_than_the_expected_result():
    before = {"ada": Rating(1800, 80), "bob": Rating(1600, 80), "cy": Rating(1400, 80), "dee": Rating(1200, 80)}
    expected = rate_contest([Standing("ada", 1), Standing("bob", 2), Standing("cy", 3), Standing("dee", 4)], before)
    upset = rate_contest([Standing("dee", 1), Standing("cy", 2), Standing("bob", 3), Standing("ada", 4)], before)
    for player, rating in before.items():
        moved_expected = abs(expected[player].rating - rating.rating)
        moved_upset = abs(upset[player].rating - rating.rating)
        assert moved_upset > moved_expected, player
    assert upset["dee"].rating > before["dee"].rating
    assert upset["ada"].rating < before["ada"].rating


def test_a_certain_rating_moves_less_than_an_uncertain_one():
    before = {"ada": Rating(1500, 60), "bob": Rating(1500, 300), "cy": Rating(1500, 80), "dee": Rating(1500, 80)}
    after = rate_contest([Standing("ada", 1), Standing("bob", 1), Standing("cy", 3), Standing("dee", 4)], before)
    assert 0 < after["ada"].rating - 1500 < after["bob"].rating - 1500


def test_players_absent_from_the_contest_are_not_touched_by_it():
    before = {"ada": Rating(1550, 120), "eve": Rating(1900, 40)}
    after = rate_contest([Standing("ada", 2), Standing("bob", 1)], before)
    assert set(after) == {"ada", "bob"}
    assert before["eve"] == Rating(1900, 40)


def test_a_period_sat_out_only_grows_the_rd_by_the_drift():
    before = Rating(1620, 200, DEFAULT_VOLATILITY)
    aged = age(before)
    assert aged.rd == pytest.approx(math.hypot(200, DRIFT))
    assert (aged.rating, aged.volatility) == (1620, DEFAULT_VOLATILITY)
    # A stored rating with another volatility drifts by its own.
    assert age(Rating(1620, 200, 0.06)).rd == pytest.approx(math.hypot(200, 0.06 * SCALE))


def test_rd_grows_no_further_than_a_newcomers():
    assert age(Rating(1500, 349.9)).rd == MAX_RD
    assert age(Rating()).rd == MAX_RD
    rating = Rating(1500, LIMIT_RD)
    for periods in range(1, 200):
        rating = age(rating)
        assert rating.rd == pytest.approx(min(math.sqrt(LIMIT_RD**2 + periods * DRIFT**2), MAX_RD))
    assert rating.rd == MAX_RD


def test_the_conservative_rating_is_two_rds_below_the_rating():
    assert conservative_rating(Rating(1700, 60)) == 1580
    assert conservative_rating(Rating()) == 800


@pytest.mark.parametrize("place", [0, -1])
def test_a_place_below_one_is_refused(place: int):
    with pytest.raises(ValueError, match=r"Places start at 1 .* 'bob' has place"):
        rate_contest([Standing("ada", 1), Standing("bob", place)], {})


def test_a_player_listed_twice_is_refused_by_name():
    standings = [Standing("ada", 1), Standing("bob", 2), Standing("ada", 3), Standing("cy", 3)]
    with pytest.raises(ValueError, match=r"appear once .* repeated: 'ada'\.$"):
        rate_contest(standings, {})


def test_a_lone_participant_listed_twice_is_still_refused():
    with pytest.raises(ValueError, match="repeated: 'ada'"):
        rate_contest([Standing("ada", 1), Standing("ada", 1)], {})


@pytest.mark.parametrize(
    ("rating", "rd", "volatility"),
    [(float("nan"), 100, 0.06), (1500, 0, 0.06), (1500, -5, 0.06), (1500, 100, 0), (1500, float("inf"), 0.06)],
)
def test_an_impossible_rating_is_refused(rating: float, rd: float, volatility: float):
    with pytest.raises(ValueError, match="must be"):
        Rating(rating, rd, volatility)


def test_one_performance_far_from_the_rating_moves_it_a_bounded_amount():
    # A low-rated player beats 94 of 95 established opponents: the case where all-pairs Glicko-2 found a
    # volatility near 0.9, and its volatility iteration overflowed in longer runs.
    field = [Standing(i, i + 1) for i in range(96)]
    before = {i: Rating(1500 + 5 * i, 45) for i in range(1, 96)}
    before[0] = Rating(1000, 55)
    after = rate_contest(field, before)
    prior_rd = math.hypot(55, DRIFT)
    # The logistic observation's slope is at most π/(√3·β), so one contest moves a rating by at most RD² times it.
    bound = prior_rd**2 * math.pi / (math.sqrt(3) * PERFORMANCE_SD)
    assert 0 < after[0].rating - 1000 <= bound
    assert after[0].rd < prior_rd


def test_ratings_far_apart_rate_without_overflow():
    before = {"giant": Rating(30000, 30), "tiny": Rating(100, 30), "mid": Rating(1500, 350)}
    for places in ([1, 2, 3], [3, 2, 1], [2, 3, 1]):
        after = rate_contest([Standing(p, place) for p, place in zip(before, places, strict=True)], before)
        assert all(math.isfinite(r.rating) and 0 < r.rd < MAX_RD for r in after.values())


def test_many_contests_of_inconsistent_results_stay_finite_and_in_a_sane_range():
    # Places drawn afresh each contest, on fields of a few to a hundred players: the 40-contest run that made
    # all-pairs Glicko-2's volatility iteration raise OverflowError without its cap.
    rng = random.Random(20261125)
    ratings: dict[int, Rating] = {}
    for _ in range(40):
        entrants = rng.sample(range(300), rng.randint(2, 100))
        places = sorted(rng.randint(1, len(entrants)) for _ in entrants)
        after = rate_contest([Standing(p, place) for p, place in zip(entrants, places, strict=True)], ratings)
        ratings.update({p: age(r) for p, r in ratings.items() if p not in after} | after)
    assert all(800 < r.rating < 2200 and LIMIT_RD <= r.rd <= MAX_RD for r in ratings.values())


def test_on_known_skills_the_two_rd_interval_covers_near_its_nominal_rate_and_ranks_follow_skill():
    sim = _simulation()
    outcome = sim.simulate(sim.Scenario("small", players=120, contests=30, entrants=(8, 40), skill_sd=350))
    assert 0.85 <= outcome.coverage_all <= 0.99
    assert 0.85 <= outcome.coverage_final <= 0.995
    assert outcome.spearman > 0.9


def test_when_places_are_pure_noise_the_rd_stays_as_wide_as_the_ratings_spread():
    # All-pairs Glicko-2 ended such a run with ratings spread by 156 and a median RD of 29.
    sim = _simulation()
    outcome = sim.simulate(sim.Scenario("noise", players=120, contests=30, entrants=(8, 40), skill_sd=0))
    assert outcome.median_rd > 100
    assert outcome.median_rd > 0.75 * outcome.rating_sd
    assert outcome.coverage_final >= 0.9


def test_the_simulations_spearman_is_pearson_on_ranks_with_ties_sharing_their_mean_rank():
    spearman = _simulation().spearman
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1)
    assert spearman([1, 1, 2, 3], [5, 6, 7, 8]) == pytest.approx(0.9486833, abs=1e-6)
