"""«Revancha»: on a finished game, its organizer and players make the next game's card,
the same players in the same mode with the next one starting; one card per game."""

from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import timezone, translation

from scorecards import services
from scorecards.models import Scorecard
from tests.factories import UserFactory, fill, make_scorecard
from tests.screens import HTMX, card_page, finalize, seen

pytestmark = pytest.mark.django_db

REMATCH = 'action="/tarjetas/{pk}/revancha/"'


@pytest.fixture
def finished(organizer, ana, ben, carla):
    """A game Olga organized for Ana, Ben and Carla, seated in that order, finished."""
    card = make_scorecard(organizer, [ana, ben, carla])
    finalize(card)
    return card


def rematch(client, card, **headers):
    return client.post(reverse("rematch", args=[card.pk]), headers=headers)


def finish_digital(card):
    """A digital game ended: its last box finalizes it (the test writes them directly)."""
    Scorecard.objects.filter(pk=card.pk).update(mode=Scorecard.DIGITAL)
    fill(card)
    Scorecard.objects.filter(pk=card.pk).update(finalized_at=timezone.now())


def seating(card):
    return [seat.player.username for seat in card.seats.order_by("order")]


# Who sees the button


@pytest.mark.parametrize("username", ["org", "ana", "carla"])
def test_the_organizer_and_every_player_see_revancha_on_a_finished_game(client, finished, username):
    client.force_login(get_user_model().objects.get(username=username))
    page = card_page(client, finished)
    assert REMATCH.format(pk=finished.pk) in page
    assert ">Revancha</button>" in page
    # It says who starts: the second seat.
    assert "Los mismos jugadores y dados; empieza <bdi>Ben</bdi>." in page


def test_staff_who_took_no_part_see_no_revancha(client, finished):
    client.force_login(UserFactory(is_staff=True))
    page = seen(card_page(client, finished))
    assert "Gana" in page or "Empate" in page  # the finished card itself
    assert "revancha/" not in page


def test_a_card_in_play_offers_no_revancha(org_client, card):
    assert "revancha/" not in card_page(org_client, card)


def test_revancha_comes_with_the_finished_sheet_a_live_page_gets(ana_client, finished):
    """A player watching when the organizer finalized gets the whole sheet: with it, the
    button."""
    response = ana_client.get(
        reverse("scorecard_live", args=[finished.pk]), {"version": 0}, headers=HTMX
    )
    assert "<html" not in response.text
    assert REMATCH.format(pk=finished.pk) in response.text


def test_who_starts_again_is_the_order_page_with_the_same_players_and_mode(
    ana_client, ana, ben, carla, organizer
):
    card = make_scorecard(organizer, [ana, ben, carla])
    finish_digital(card)
    page = card_page(ana_client, card)
    link = next(line for line in page.splitlines() if "O decidid otra vez ¿Quién empieza?" in line)
    href = link.split('href="')[1].split('"')[0].replace("&amp;", "&")
    url = urlsplit(href)
    assert url.path == reverse("scorecard_order")
    assert parse_qs(url.query) == {
        "p": [str(ben.pk), str(carla.pk), str(ana.pk)],
        "modo": ["digital"],
    }
    order = ana_client.get(href)
    assert order.status_code == 200
    assert "¿Quién empieza?" in order.text
    assert "Con dados virtuales" in order.text


# The tap


def test_a_player_taps_and_the_organizer_organizes_the_next_game_the_next_player_starting(
    ana_client, finished, organizer
):
    """Olga held the scoring phone: whoever taps «Revancha», the next card is hers to
    score, not the tapper's."""
    response = rematch(ana_client, finished)
    new = Scorecard.objects.exclude(pk=finished.pk).get()
    assert response.status_code == 302
    assert response["Location"] == reverse("scorecard", args=[new.pk])
    assert new.organizer == organizer
    assert new.rematch_of == finished
    assert new.mode == finished.mode == Scorecard.PRESENCIAL
    assert not new.is_finalized
    assert seating(new) == ["ben", "carla", "ana"]
    assert all(value is None for seat in new.seats.all() for value in seat.scores.values())
    page = ana_client.get(response["Location"])
    assert (
        "Revancha: nueva tarjeta con los mismos jugadores; la organiza \u2068Olga\u2069."
        in page.text
    )
    assert "Se actualiza sola." in seen(page.text)  # Ana watches it
    assert "Descartar tarjeta" not in seen(page.text)


def test_a_players_tap_makes_the_card_the_organizers_tap_would(client, organizer, ana, ben):
    made = {}
    for tapper in (organizer, ana):
        card = make_scorecard(organizer, [ana, ben])
        finalize(card)
        client.force_login(tapper)
        rematch(client, card)
        new = Scorecard.objects.get(rematch_of=card)
        made[tapper.username] = (new.organizer, new.mode, seating(new))
    assert made["ana"] == made["org"] == (organizer, Scorecard.PRESENCIAL, ["ben", "ana"])


def test_the_organizer_taps_after_a_player_and_scores_the_same_card(client, finished, ana):
    client.force_login(ana)
    made = rematch(client, finished)["Location"]
    client.force_login(finished.organizer)
    response = rematch(client, finished)
    assert response["Location"] == made
    assert Scorecard.objects.filter(rematch_of=finished).count() == 1
    page = client.get(made).text
    assert "Ya había una revancha de esta partida: es esta." in page
    assert "Descartar tarjeta" in seen(page)  # hers to organize


def test_an_organizer_who_can_no_longer_log_in_leaves_the_rematch_to_the_tapper(
    ana_client, finished, organizer, ana
):
    organizer.is_active = False
    organizer.save()
    rematch(ana_client, finished)
    assert Scorecard.objects.get(rematch_of=finished).organizer == ana
    page = ana_client.get(reverse("scorecard", args=[finished.rematches.get().pk])).text
    assert "Revancha: nueva tarjeta con los mismos jugadores." in page


def test_the_organizer_taps_and_organizes_it_again(org_client, finished, organizer):
    rematch(org_client, finished)
    new = Scorecard.objects.get(rematch_of=finished)
    assert new.organizer == organizer
    assert seating(new) == ["ben", "carla", "ana"]


def test_a_digital_game_gets_a_digital_rematch(client, ana, ben):
    card = make_scorecard(ana, [ana, ben])
    finish_digital(card)
    client.force_login(ben)
    rematch(client, card)
    new = Scorecard.objects.get(rematch_of=card)
    assert new.mode == Scorecard.DIGITAL
    assert new.organizer == ana
    assert seating(new) == ["ben", "ana"]


def test_a_solitaire_game_gets_the_same_seat(client, ana):
    card = make_scorecard(ana, [ana])
    finalize(card)
    client.force_login(ana)
    rematch(client, card)
    assert seating(Scorecard.objects.get(rematch_of=card)) == ["ana"]


def test_the_other_players_find_it_under_en_juego(client, finished, ana, carla):
    client.force_login(ana)
    rematch(client, finished)
    new = Scorecard.objects.get(rematch_of=finished)
    client.force_login(carla)
    home = client.get(reverse("home")).text
    assert "En juego" in home
    assert reverse("scorecard", args=[new.pk]) in home


def test_a_second_tap_goes_to_the_card_the_first_made(ana_client, finished):
    first = rematch(ana_client, finished)
    second = rematch(ana_client, finished)
    assert Scorecard.objects.filter(rematch_of=finished).count() == 1
    assert second["Location"] == first["Location"]


def test_another_player_tapping_later_watches_the_first_ones_card(client, finished, ana, ben):
    client.force_login(ana)
    made = rematch(client, finished)["Location"]
    client.force_login(ben)
    response = rematch(client, finished)
    assert response["Location"] == made
    assert Scorecard.objects.filter(rematch_of=finished).count() == 1
    page = client.get(made).text
    assert "Ya había una revancha de esta partida: es esta." in page
    assert "Se actualiza sola." in page  # watching: Ana organizes it
    assert "Descartar tarjeta" not in page


def test_the_organizer_who_did_not_play_is_told_who_organizes_it(client, finished, organizer, ana):
    """Ana made the rematch while Olga's account was deactivated: back, Olga finds it is
    Ana's."""
    organizer.is_active = False
    organizer.save()
    client.force_login(ana)
    rematch(client, finished)
    organizer.is_active = True
    organizer.save()
    client.force_login(organizer)
    response = rematch(client, finished)
    # Not a player of the rematch: it does not exist for them, so they stay on the game.
    assert response["Location"] == reverse("scorecard", args=[finished.pk])
    assert "\u2068Ana\u2069 ya organiza la revancha de esta partida." in card_page(client, finished)
    assert Scorecard.objects.filter(rematch_of=finished).count() == 1


def test_to_htmx_the_rematch_is_a_whole_page_redirect(ana_client, finished):
    response = rematch(ana_client, finished, **HTMX)
    new = Scorecard.objects.get(rematch_of=finished)
    assert response["HX-Redirect"] == reverse("scorecard", args=[new.pk])


def test_a_discarded_rematch_leaves_room_for_another(ana_client, finished, organizer):
    rematch(ana_client, finished)
    first = Scorecard.objects.get(rematch_of=finished)
    services.scorecard_discard(scorecard_id=first.pk, author=organizer)
    rematch(ana_client, finished)
    again = Scorecard.objects.get(rematch_of=finished)
    assert again.pk != first.pk


def test_a_rematch_can_have_its_own_rematch(ana_client, finished):
    rematch(ana_client, finished)
    second = Scorecard.objects.get(rematch_of=finished)
    finalize(second)
    rematch(ana_client, second)
    assert seating(Scorecard.objects.get(rematch_of=second)) == ["carla", "ana", "ben"]


@pytest.mark.parametrize("n", [2, 8])
def test_the_rematch_costs_the_same_queries_however_many_play(
    client, organizer, django_assert_num_queries, n
):
    card = make_scorecard(organizer, n=n)
    finalize(card)
    client.force_login(organizer)
    # session, user, the game with its organizer (and the EXISTS that says whether this
    # user plays in it), its seats with their players, its rematch (none yet); the
    # savepoint, the new card, its seats in one insert, the release; and the session
    # saved with the message, in a savepoint of its own (3).
    with django_assert_num_queries(12):
        assert rematch(client, card).status_code == 302


# Refused, and nothing made


def test_a_stranger_gets_404_and_nothing_is_made(client, finished):
    client.force_login(UserFactory())
    assert rematch(client, finished).status_code == 404
    assert Scorecard.objects.count() == 1


def test_logged_out_goes_to_log_in(client, finished):
    response = rematch(client, finished)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))
    assert Scorecard.objects.count() == 1


def test_a_get_is_not_a_tap(ana_client, finished):
    assert ana_client.get(reverse("rematch", args=[finished.pk])).status_code == 405
    assert Scorecard.objects.count() == 1


def test_staff_who_took_no_part_are_refused(client, finished):
    client.force_login(UserFactory(is_staff=True))
    assert rematch(client, finished).status_code == 403
    assert Scorecard.objects.count() == 1


def test_a_game_still_in_play_is_refused_clearly(ana_client, card):
    response = rematch(ana_client, card)
    assert response["Location"] == reverse("scorecard", args=[card.pk])
    assert "La partida aún no ha terminado: la revancha se juega después." in card_page(
        ana_client, card
    )
    assert Scorecard.objects.count() == 1
    # To htmx, the sheet with the message.
    response = rematch(ana_client, card, **HTMX)
    assert response.status_code == 409
    assert "La partida aún no ha terminado" in response.text
    assert "<html" not in response.text
    assert Scorecard.objects.count() == 1


def test_a_discarded_card_is_gone_and_has_no_rematch(org_client, card):
    pk = card.pk
    services.scorecard_discard(scorecard_id=pk, author=card.organizer)
    assert org_client.post(reverse("rematch", args=[pk])).status_code == 404
    assert Scorecard.objects.count() == 0


def test_a_player_who_no_longer_plays_is_named_and_nothing_is_made(ana_client, finished, carla):
    carla.plays = False
    carla.save()
    response = rematch(ana_client, finished)
    assert response["Location"] == reverse("scorecard", args=[finished.pk])
    page = card_page(ana_client, finished)
    assert "\u2068Carla\u2069 no juega en Dados y no puede estar en una tarjeta." in page
    assert Scorecard.objects.count() == 1


@pytest.mark.parametrize("pk", ["0", "999999"])
def test_a_card_that_does_not_exist_is_404(ana_client, pk):
    assert ana_client.post(f"/tarjetas/{pk}/revancha/").status_code == 404


def test_the_finished_game_is_left_as_it_was(ana_client, finished):
    before = Scorecard.objects.filter(pk=finished.pk).values().get()
    rematch(ana_client, finished)
    assert Scorecard.objects.filter(pk=finished.pk).values().get() == before


def test_the_service_answers_the_same_card_to_every_tap(finished, ana, ben):
    first = services.scorecard_rematch(scorecard_id=finished.pk, user=ana)
    second = services.scorecard_rematch(scorecard_id=finished.pk, user=ben)
    assert (first.made, second.made) == (True, False)
    assert first.scorecard.pk == second.scorecard.pk


def test_in_english_it_is_a_rematch(ana_client, finished, settings):
    ana_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    # The request leaves its language active: put back the tests' own afterwards.
    with translation.override(translation.get_language()):
        page = card_page(ana_client, finished)
    assert ">Rematch</button>" in page
    assert "The same players and dice; <bdi>Ben</bdi> starts." in page
    assert "Or decide again: who starts?" in page
