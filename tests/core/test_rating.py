"""Glicko-2 against Glickman's worked example, and contests rated as all-pairs games from their standings."""

from __future__ import annotations

import random

import pytest

from core.rating import (
    MAX_RD,
    MAX_VOLATILITY,
    SCALE,
    Game,
    Rating,
    Standing,
    age,
    conservative_rating,
    rate_contest,
    rate_period,
)


def test_the_papers_worked_example_is_reproduced():
    player = Rating(1500, 200, 0.06)
    games = [Game(Rating(1400, 30), 1), Game(Rating(1550, 100), 0), Game(Rating(1700, 300), 0)]
    after = rate_period(player, games, tau=0.5)
    # The paper prints μ′ = -0.2069 and φ′ = 0.8722 on the Glicko-2 scale.
    assert round((after.rating - 1500) / SCALE, 4) == -0.2069
    assert round(after.rd / SCALE, 4) == 0.8722
    # It converts the rounded μ′ back, so its 1464.06 is 1464.05 unrounded, and it prints σ′ = 0.059996 cut to
    # 0.05999: each printed figure is matched to one unit of its last digit.
    assert after.rating == pytest.approx(1464.06, abs=0.01)
    assert after.rd == pytest.approx(151.52, abs=0.01)
    assert after.volatility == pytest.approx(0.05999, abs=0.00001)


def test_between_equal_newcomers_the_winner_gains_what_the_loser_loses():
    after = rate_contest([Standing("ada", 1), Standing("bob", 2)], {})
    gain, loss = after["ada"].rating - 1500, 1500 - after["bob"].rating
    assert gain > 0
    assert gain == pytest.approx(loss, rel=1e-12)
    assert after["ada"].rd == after["bob"].rd


def test_a_tie_between_equal_players_leaves_their_ratings_unchanged():
    before = {"ada": Rating(1620, 80), "bob": Rating(1620, 80)}
    after = rate_contest([Standing("ada", 3), Standing("bob", 3)], before)
    assert after["ada"].rating == pytest.approx(1620, abs=1e-9)
    assert after["bob"].rating == pytest.approx(1620, abs=1e-9)


def test_equal_players_end_ordered_like_their_places():
    after = rate_contest([Standing("cy", 3), Standing("ada", 1), Standing("dee", 4), Standing("bob", 2)], {})
    assert sorted(after, key=lambda p: after[p].rating, reverse=True) == ["ada", "bob", "cy", "dee"]
    assert list(after) == ["cy", "ada", "dee", "bob"]


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


def test_tied_places_score_half_a_game_each():
    before = {"ada": Rating(1700, 60), "bob": Rating(1500, 60)}
    tied = rate_contest([Standing("ada", 1), Standing("bob", 1)], before)
    # A draw against a weaker player costs rating; a draw against a stronger one earns it.
    assert tied["ada"].rating < 1700
    assert tied["bob"].rating > 1500
    assert tied["ada"] == rate_period(before["ada"], [Game(before["bob"], 0.5)])


def test_everyone_is_rated_against_pre_contest_ratings():
    before = {"ada": Rating(1550, 120), "bob": Rating(1480, 90, 0.07)}
    after = rate_contest([Standing("ada", 1), Standing("bob", 2), Standing("cy", 3)], before)
    newcomer = Rating()
    assert after["bob"] == rate_period(before["bob"], [Game(before["ada"], 0), Game(newcomer, 1)])
    assert after["cy"] == rate_period(newcomer, [Game(before["ada"], 0), Game(before["bob"], 0)])


def test_players_absent_from_the_contest_are_not_touched():
    before = {"ada": Rating(1550, 120), "eve": Rating(1900, 40)}
    after = rate_contest([Standing("ada", 2), Standing("bob", 1)], before)
    assert set(after) == {"ada", "bob"}
    assert before["eve"] == Rating(1900, 40)


def test_playing_shrinks_the_rd():
    after = rate_contest([Standing("ada", 1), Standing("bob", 2)], {"ada": Rating(1500, 200)})
    assert after["ada"].rd < 200
    assert after["bob"].rd < 350


def test_a_period_without_games_only_grows_the_rd():
    before = Rating(1620, 200, 0.06)
    aged = age(before)
    assert aged.rd == pytest.approx((200**2 + (0.06 * SCALE) ** 2) ** 0.5)
    assert (aged.rating, aged.volatility) == (1620, 0.06)
    assert rate_period(before, []) == aged


def test_rd_grows_no_further_than_a_newcomers():
    assert age(Rating(1500, 349.9)).rd == MAX_RD
    assert age(Rating()).rd == MAX_RD
    rd = 50.0
    for _ in range(10_000):
        rd = age(Rating(1500, rd)).rd
    assert rd == MAX_RD


def test_the_conservative_rating_is_two_rds_below_the_rating():
    assert conservative_rating(Rating(1700, 60)) == 1580
    assert conservative_rating(Rating()) == 800


def test_a_contest_without_two_participants_rates_nobody():
    assert rate_contest([], {"ada": Rating(1600, 100)}) == {}
    assert rate_contest([Standing("ada", 1)], {"ada": Rating(1600, 100)}) == {}


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


@pytest.mark.parametrize("tau", [0, -0.5, float("nan")])
def test_a_system_constant_that_is_not_positive_is_refused(tau: float):
    with pytest.raises(ValueError, match="tau must be a positive number"):
        rate_contest([Standing("ada", 1), Standing("bob", 2)], {}, tau=tau)


def test_a_score_outside_zero_to_one_is_refused():
    with pytest.raises(ValueError, match="between 0 and 1"):
        rate_period(Rating(), [Game(Rating(), 2)])


def test_one_performance_far_from_the_rating_raises_the_volatility_no_further_than_the_cap():
    # A low-rated player beats 94 of 95 established opponents: all-pairs games give a small variance, and the
    # paper's step 5 alone put the volatility near 0.9 for such a contest.
    field = [Standing(i, i + 1) for i in range(96)]
    before = {i: Rating(1500 + 5 * i, 45, 0.06) for i in range(1, 96)}
    before[0] = Rating(1000, 55, 0.06)
    after = rate_contest(field, before)
    assert after[0].rating > before[0].rating + 100
    assert after[0].volatility == MAX_VOLATILITY


def test_games_whose_expected_scores_round_to_certainty_only_age_the_rating():
    giant, tiny = Rating(30000, 30, 0.06), Rating(100, 30, 0.06)
    after = rate_period(giant, [Game(tiny, 0.0), Game(tiny, 0.0)])
    assert after == age(giant)


def test_many_contests_of_inconsistent_results_keep_ratings_in_a_sane_range():
    # Places drawn afresh each contest, on fields of a few to a hundred players: what seeded stores (and erratic
    # entrants) produce. Before the volatility cap, such a run reached ratings in the tens of thousands.
    rng = random.Random(20261125)
    ratings: dict[int, Rating] = {}
    for _ in range(40):
        entrants = rng.sample(range(300), rng.randint(2, 100))
        places = sorted(rng.randint(1, len(entrants)) for _ in entrants)
        ratings.update(rate_contest([Standing(p, place) for p, place in zip(entrants, places, strict=True)], ratings))
    assert all(0 < r.rating < 4000 and r.volatility <= MAX_VOLATILITY for r in ratings.values())
