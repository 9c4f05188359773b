from django.conf import settings


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
