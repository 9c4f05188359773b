from django.conf import settings
from django.contrib.auth.backends import ModelBackend

from accounts.models import usernames_like


class UsernameAnyCaseBackend(ModelBackend):
    """Django's log-in, with the username typed in any case: «Íñigo» logs in as «íñigo»,
    since no two accounts' usernames differ only by it (accounts.admin and accounts.club
    refuse that). Where two registered before that check do, only the exact one."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if username is not None:
            like = usernames_like(username)
            if len(like) == 1 or (like and like[0] == username):
                username = like[0]
        return super().authenticate(request, username=username, password=password, **kwargs)


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
