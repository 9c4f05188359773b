from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.views.decorators.debug import sensitive_variables

from accounts.models import usernames_like


class UsernameAnyCaseBackend(ModelBackend):
    """Django's log-in, with the username typed in any case: «Íñigo» logs in as «íñigo»,
    since no two accounts' usernames differ only by it (accounts.admin and accounts.club
    refuse that)."""

    @sensitive_variables("password")
    def authenticate(self, request, username=None, password=None, **kwargs):
        username = account_username(username)
        return super().authenticate(request, username=username, password=password, **kwargs)

    @sensitive_variables("password")
    async def aauthenticate(self, request, username=None, password=None, **kwargs):
        username = await sync_to_async(account_username)(username)
        return await super().aauthenticate(request, username=username, password=password, **kwargs)


def account_username(typed: str | None) -> str | None:
    """The username of the account typed stands for, case aside; where two registered
    before that was refused differ only by it, the one spelled exactly so, or none."""
    if typed is None:
        return None
    like = usernames_like(typed)
    return like[0] if len(like) == 1 or (like and like[0] == typed) else typed


def lockout_username(request, credentials=None) -> str | None:
    """The username a log-in attempt counts against (AXES_USERNAME_CALLABLE), whatever its
    case: «Ana», «ANA» and «ana» are one account, so their failures add up."""
    if credentials:
        username = credentials.get(settings.AXES_USERNAME_FORM_FIELD)
    else:
        username = getattr(request, "data", request.POST).get(settings.AXES_USERNAME_FORM_FIELD)
    return username.casefold() if isinstance(username, str) else username


def client_ip(request) -> str:
    """The client's address: REMOTE_ADDR, or behind a trusted proxy the hop before it.

    X-Forwarded-For is only believed when the direct peer is a proxy named in
    TRUSTED_PROXIES; then the right-most address that is not a trusted proxy is
    the client (anything to its left was written by the client and may be forged).
    """
    remote = request.META.get("REMOTE_ADDR", "")
    trusted = set(settings.TRUSTED_PROXIES)
    if remote not in trusted:
        return remote
    hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    for hop in reversed([hop for hop in hops if hop]):
        if hop not in trusted:
            return hop
    return remote
