from datetime import UTC, datetime, timedelta
from pathlib import Path

from django import template
from django.conf import settings
from django.utils import timezone

from safekeeping.archive import backups_in

register = template.Library()

# A club's treasurer is warned when the newest backup is older than this.
STALE_AFTER = timedelta(days=7)


@register.inclusion_tag("safekeeping/status.html")
def backup_status():
    """When the newest backup in BACKUP_DIR was made and where, for the admin's index:
    a warning when there is none, or it is older than a week."""
    folder = Path(settings.BACKUP_DIR)
    found = backups_in(folder)
    if not found:
        return {"folder": folder, "newest": None, "stale": True}
    newest = found[-1]
    try:
        made = datetime.fromtimestamp(newest.stat().st_mtime, tz=UTC)
    except OSError:
        return {"folder": folder, "newest": None, "stale": True}
    return {
        "folder": folder,
        "newest": newest,
        "made": made,
        "stale": timezone.now() - made > STALE_AFTER,
    }
