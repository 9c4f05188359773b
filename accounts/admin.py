from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin
from django.utils.translation import gettext_lazy as _

from accounts.models import User


@admin.register(User)
class UserAdmin(BaseUserAdmin):
    list_display = ["display_name", "username", "is_active", "is_staff", "last_login"]
    list_filter = ["is_active", "is_staff"]
    search_fields = ["display_name", "username", "first_name", "last_name"]
    ordering = ["display_name", "username"]
    fieldsets = [
        (None, {"fields": ["username", "display_name", "password"]}),
        (_("Permisos"), {"fields": ["is_active", "is_staff", "is_superuser"]}),
        (_("Fechas"), {"fields": ["last_login", "date_joined"]}),
    ]
    add_fieldsets = [
        (
            None,
            {
                "classes": ["wide"],
                "fields": ["username", "display_name", "password1", "password2"],
            },
        ),
    ]
